#pragma once
// Whether the client of an HTTP request has gone away while its answer is being computed.
// cpp-httplib 0.11 gives handlers the peer's address but not the socket: find the connection's
// socket among this process's descriptors by its two endpoints once, then peek at it.
#include <string>

namespace t5s::serve {

class PeerWatch {
public:
    PeerWatch(const std::string& remote_addr, int remote_port, int local_port);
    // True once the peer closed its side (an orderly shutdown or a reset). False when unknown.
    bool closed() const;

private:
    int fd_ = -1;
};

}  // namespace t5s::serve
