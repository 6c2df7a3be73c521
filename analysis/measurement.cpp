#include "analysis/measurement.hpp"

#include <iterator>

namespace np {

const char* to_string(Tool t) {
    switch (t) {
        case Tool::iperf3:
            return "iperf3";
        case Tool::iperf2:
            return "iperf2";
        case Tool::ping:
            return "ping";
    }
    return "iperf3";
}

void Measurements::append(Measurements other) {
    throughput.insert(throughput.end(), std::make_move_iterator(other.throughput.begin()),
                      std::make_move_iterator(other.throughput.end()));
    pings.insert(pings.end(), std::make_move_iterator(other.pings.begin()),
                 std::make_move_iterator(other.pings.end()));
    failures.insert(failures.end(), std::make_move_iterator(other.failures.begin()),
                    std::make_move_iterator(other.failures.end()));
    servers.insert(servers.end(), std::make_move_iterator(other.servers.begin()),
                   std::make_move_iterator(other.servers.end()));
    notes.insert(notes.end(), std::make_move_iterator(other.notes.begin()),
                 std::make_move_iterator(other.notes.end()));
}

}  // namespace np
