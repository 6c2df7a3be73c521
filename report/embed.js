// Runs after vega, vega-lite and vega-embed: draws every chart, then marks the page so a
// headless browser (tests/browser) can tell that all of them rendered and how many data marks
// each drew. Errors land on <body> as well as in the console.
(function () {
  var body = document.body;
  var errors = 0;
  var consoleError = console.error;
  console.error = function () {
    errors += 1;
    body.setAttribute('data-console-errors', String(errors));
    return consoleError.apply(console, arguments);
  };
  window.addEventListener('error', function (e) {
    body.setAttribute('data-chart-error', String(e.message));
  });
  var divs = Array.prototype.slice.call(document.querySelectorAll('div.vega'));
  Promise.all(divs.map(function (div) {
    var spec = JSON.parse(document.getElementById('spec-' + div.id).textContent);
    return vegaEmbed(div, spec, {mode: 'vega-lite', renderer: 'svg', actions: false})
      .then(function () {
        var marks = div.querySelectorAll(
          'g.role-mark > path, g.role-mark > line, g.role-mark > text, g.role-mark > rect');
        div.setAttribute('data-marks', String(marks.length));
      });
  })).then(function () {
    body.setAttribute('data-charts-rendered', String(divs.length));
  }, function (e) {
    body.setAttribute('data-chart-error', String((e && e.message) || e));
    console.error(e);
  });
})();
