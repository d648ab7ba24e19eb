#include "serve/guarded_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>

namespace t5s::serve {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSliceMs = 200;  // how often a wait looks whether the server is stopping

struct ConnectionState {
    RequestTrip trip = RequestTrip::None;
    bool close_requested = false;
};
thread_local ConnectionState* t_state = nullptr;

// One connection's socket as httplib's Stream, counting each request's bytes against the limits
// and its deadline. Keeps its read buffer across the requests of a keep-alive connection.
class BudgetStream final : public httplib::Stream {
public:
    BudgetStream(socket_t sock, const RequestLimits& limits, time_t write_timeout_s, const std::atomic<socket_t>& server_sock,
                 ConnectionState& state)
        : sock_(sock),
          limits_(limits),
          write_timeout_ms_(static_cast<int>(write_timeout_s * 1000)),
          server_sock_(server_sock),
          state_(state) {}

    void start_request() {
        deadline_ =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.read_timeout_s));
        in_headers_ = true;
        header_bytes_ = header_lines_ = line_length_ = body_bytes_ = written_ = 0;
        previous_ = 0;
        state_ = ConnectionState{};
    }
    bool buffered() const { return pos_ < len_; }
    size_t written() const { return written_; }
    bool read_started() const { return header_bytes_ > 0; }

    bool is_readable() const override { return buffered() || wait_readable(); }
    bool is_writable() const override { return wait(POLLOUT, write_timeout_ms_); }

    ssize_t read(char* ptr, size_t size) override {
        if (state_.trip != RequestTrip::None) return -1;
        if (!buffered()) {
            if (!wait_readable()) return -1;
            const ssize_t n = ::recv(sock_, buffer_, sizeof buffer_, 0);
            if (n <= 0) return n;
            pos_ = 0;
            len_ = static_cast<size_t>(n);
        }
        const size_t n = std::min(size, len_ - pos_);
        if (!count(buffer_ + pos_, n)) return -1;
        std::copy(buffer_ + pos_, buffer_ + pos_ + n, ptr);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char* ptr, size_t size) override {
        if (!is_writable()) return -1;
        const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
        if (n > 0) written_ += static_cast<size_t>(n);
        return n;
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override { endpoint(&getpeername, ip, port); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { endpoint(&getsockname, ip, port); }
    socket_t socket() const override { return sock_; }

private:
    // Header bytes and lines until the blank line, then body bytes; false (and the trip) past a limit.
    bool count(const char* p, size_t n) {
        size_t i = 0;
        for (; i < n && in_headers_; ++i) {
            if (++header_bytes_ > limits_.header_bytes) return trip(RequestTrip::HeaderBytes);
            const char c = p[i];
            if (c == '\n') {
                const bool blank = line_length_ == 1 && previous_ == '\r';
                if (blank && header_lines_ > 0) in_headers_ = false;  // the first line is the request line
                else if (++header_lines_ > limits_.header_lines + 1) return trip(RequestTrip::HeaderLines);
                line_length_ = 0;
            } else {
                ++line_length_;
            }
            previous_ = c;
        }
        body_bytes_ += n - i;
        if (body_bytes_ > limits_.body_bytes) return trip(RequestTrip::BodyBytes);
        return true;
    }
    bool trip(RequestTrip why) {
        state_.trip = why;
        return false;
    }

    bool wait_readable() const {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
            if (left <= 0) {
                state_.trip = RequestTrip::Deadline;
                return false;
            }
            if (server_sock_ == INVALID_SOCKET) return false;
            if (wait(POLLIN, static_cast<int>(std::min<long long>(left, kSliceMs)))) return true;
            if (errored_) return false;
        }
    }
    bool wait(short events, int timeout_ms) const {
        pollfd p{sock_, events, 0};
        const int r = ::poll(&p, 1, timeout_ms);
        errored_ = r < 0;
        return r > 0;
    }

    template <class Get>
    void endpoint(Get get, std::string& ip, int& port) const {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        char host[NI_MAXHOST] = {0}, serv[NI_MAXSERV] = {0};
        if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                        NI_NUMERICHOST | NI_NUMERICSERV) != 0)
            return;
        ip = host;
        port = std::atoi(serv);
    }

    socket_t sock_;
    const RequestLimits& limits_;
    int write_timeout_ms_;
    const std::atomic<socket_t>& server_sock_;
    ConnectionState& state_;
    char buffer_[4096];
    size_t pos_ = 0, len_ = 0;
    Clock::time_point deadline_;
    bool in_headers_ = true;
    char previous_ = 0;
    size_t header_bytes_ = 0, header_lines_ = 0, line_length_ = 0, body_bytes_ = 0, written_ = 0;
    mutable bool errored_ = false;
};

// Whether another request arrives within the keep-alive timeout (or the server stops).
bool next_request_arrives(const BudgetStream& strm, int timeout_ms, const std::atomic<socket_t>& server_sock) {
    if (strm.buffered()) return true;
    for (int waited = 0; waited < timeout_ms && server_sock != INVALID_SOCKET; waited += kSliceMs) {
        pollfd p{strm.socket(), POLLIN, 0};
        const int r = ::poll(&p, 1, std::min(kSliceMs, timeout_ms - waited));
        if (r != 0) return r > 0;
    }
    return false;
}

// After the last answer: stop sending, then read what the client still sends for a moment (up to
// 4 MiB, 1 s), so that closing does not reset the connection before the client has read the answer.
void linger_and_close(socket_t sock) {
    ::shutdown(sock, SHUT_WR);
    char sink[4096];
    size_t drained = 0;
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (drained < (4u << 20)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        pollfd p{sock, POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
        const ssize_t n = ::recv(sock, sink, sizeof sink, 0);
        if (n <= 0) break;
        drained += static_cast<size_t>(n);
    }
    ::close(sock);
}

std::string seconds(double s) {
    std::ostringstream out;
    out << s;
    return out.str();
}

}  // namespace

void GuardedServer::widen_backlog(int backlog) {
    if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

RequestTrip GuardedServer::current_trip() { return t_state ? t_state->trip : RequestTrip::None; }

void GuardedServer::close_after_response() {
    if (t_state) t_state->close_requested = true;
}

int GuardedServer::trip_status(RequestTrip trip) const {
    switch (trip) {
        case RequestTrip::Deadline: return 408;
        case RequestTrip::HeaderBytes:
        case RequestTrip::HeaderLines: return 431;
        case RequestTrip::BodyBytes: return 413;
        case RequestTrip::None: break;
    }
    return 400;
}

std::string GuardedServer::trip_message(RequestTrip trip) const {
    switch (trip) {
        case RequestTrip::Deadline:
            return "the request did not arrive within " + seconds(limits_.read_timeout_s) + " s (--read-timeout)";
        case RequestTrip::HeaderBytes:
            return "the request's headers are larger than " + std::to_string(limits_.header_bytes) + " bytes";
        case RequestTrip::HeaderLines:
            return "the request has more than " + std::to_string(limits_.header_lines) + " header fields";
        case RequestTrip::BodyBytes:
            return "the body is larger than 1 MiB (" + std::to_string(limits_.body_bytes) +
                   " bytes as sent, chunk size lines included)";
        case RequestTrip::None: break;
    }
    return "request error";
}

// httplib's own loop (keep-alive requests on one socket), on a BudgetStream.
bool GuardedServer::process_and_close_socket(socket_t sock) {
    ConnectionState state;
    t_state = &state;
    BudgetStream strm(sock, limits_, write_timeout_sec_, svr_sock_, state);
    const int keep_alive_ms = static_cast<int>(keep_alive_timeout_sec_ * 1000);
    bool ok = false;
    for (size_t left = keep_alive_max_count_; left > 0 && next_request_arrives(strm, keep_alive_ms, svr_sock_); --left) {
        strm.start_request();
        bool connection_closed = false;
        ok = process_request(strm, left == 1, connection_closed, nullptr);
        if (state.trip != RequestTrip::None && strm.written() == 0 && strm.read_started()) {
            // Cut short on its first line, which httplib answers with nothing: say why.
            const std::string body = "{\"error\": \"" + trip_message(state.trip) + "\"}\n";
            const std::string head =
                "HTTP/1.1 " + std::to_string(trip_status(state.trip)) +
                " Request refused\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n";
            strm.write((head + body).data(), head.size() + body.size());
        }
        if (!ok || connection_closed || state.trip != RequestTrip::None || state.close_requested) break;
    }
    t_state = nullptr;
    linger_and_close(sock);
    return ok;
}

}  // namespace t5s::serve
