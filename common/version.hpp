#pragma once
// Which build wrote a document, so an old result can be re-explained knowing what produced it.
// The facts live in one generated header (cmake/np_version.hpp.in: the CMake project version
// and the git revision at build time); this is the only code that reads it.
//
// Every JSON document np-explain and np-probe write (np-findings/1, the contract's "explain",
// np-trace/1) carries them under one key, "generator", as
//   {"program": "np-explain", "version": "0.1.0", "revision": "a957331"}
// ("revision": abbreviated git commit, "-dirty" when the tree had changes, "unknown" outside
// git); the report shows version_line() and an HTML <meta name="generator">. Readers do not
// require the key: documents written before it existed stay readable.
#include <nlohmann/json.hpp>
#include <string>

namespace np {

// The project version, e.g. "0.1.0".
std::string version();
// The git revision of the build, e.g. "a957331", "a957331-dirty" or "unknown".
std::string revision();
// "np-explain 0.1.0 (git a957331)": what --version prints, for `program`.
std::string version_line(const std::string& program);
// The value of the "generator" key of a document `program` writes.
nlohmann::json generator(const std::string& program);

}  // namespace np
