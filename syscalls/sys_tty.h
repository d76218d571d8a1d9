// Terminal ioctls (sys_tty.cc), called by ioctl(2) for files that are an end of a pty.
#pragma once

#include "syscalls/common.h"
#include "vfs/tty.h"

namespace sentry::syscalls {

Result<uint64_t> TtyIoctl(Task& t, vfs::Tty& tty, bool master, uint64_t cmd, uint64_t arg);

}  // namespace sentry::syscalls
