#pragma once
// cpp-httplib's server (0.11.4) with the limits it lacks: one request must arrive within a deadline
// (a client that drips bytes gets 408), its header block is bounded in bytes and lines (431), and
// its body in bytes however it is framed, Content-Length or chunked (413; httplib alone bounds only
// Content-Length). The bytes are counted as they are read, so nothing over a limit is ever stored.
// A request cut short is answered and its connection closed.
#include <httplib.h>

#include <cstddef>
#include <string>

#include "serve/bounded_json.h"

namespace t5s::serve {

struct RequestLimits {
    size_t header_bytes = 64 << 10;     // request line and headers together
    size_t header_lines = 100;          // header fields
    size_t body_bytes = kMaxJsonBytes;  // as sent: a chunked body's size lines count too
    double read_timeout_s = 20;         // from the request's first byte to its body's last
};

// Why the request being handled on this thread was cut short.
enum class RequestTrip { None, Deadline, HeaderBytes, HeaderLines, BodyBytes };

class GuardedServer : public httplib::Server {
public:
    explicit GuardedServer(RequestLimits limits) : limits_(limits) {}
    const RequestLimits& limits() const { return limits_; }
    // After binding: httplib listens with a backlog of 5, so that a burst of connections waits
    // seconds for SYN retries; Linux lets listen() again set a longer one.
    void widen_backlog(int backlog);

    // For handlers on a connection thread: the current request's trip, and a request to close the
    // connection after this answer (a refused request's unread body must not be read as the next one).
    static RequestTrip current_trip();
    static void close_after_response();
    // The status and one-line message that answer a trip (408, 431, 413).
    int trip_status(RequestTrip trip) const;
    std::string trip_message(RequestTrip trip) const;

private:
    bool process_and_close_socket(socket_t sock) override;
    RequestLimits limits_;
};

}  // namespace t5s::serve
