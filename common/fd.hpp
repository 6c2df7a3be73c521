#pragma once
// A file descriptor that is closed when its owner goes: for sockets, netlink and ioctl handles.
#include <unistd.h>

namespace np {

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() {  // hands the descriptor over: no longer closed here
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

  private:
    int fd_;
};

}  // namespace np
