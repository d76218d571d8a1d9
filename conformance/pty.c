// Pseudo-terminals: posix_openpt/grantpt/unlockpt/ptsname, the slave's default termios,
// canonical input with echo and erase, raw mode with VMIN/VTIME, EOF, output
// post-processing, window sizes, controlling terminals (setsid + TIOCSCTTY, /dev/tty,
// TIOCGSID, tcgetpgrp), ^C to the foreground group, SIGTTIN for a background reader, and
// hangup when the master closes.
#include "common.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>

static int open_master(void) {
  int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  CHECK(m >= 0);
  CHECK_OK(grantpt(m));
  return m;
}

static int open_slave(int m, int flags) {
  char *name = ptsname(m);
  CHECK(name != NULL);
  int s = open(name, O_RDWR | O_CLOEXEC | flags);
  CHECK(s >= 0);
  return s;
}

static int open_unlocked_master(void) {
  int m = open_master();
  CHECK_OK(unlockpt(m));
  return m;
}

// A ready pair: the master, and in *slave the slave (not as a controlling terminal).
static int open_pair(int *slave) {
  int m = open_unlocked_master();
  *slave = open_slave(m, O_NOCTTY);
  return m;
}

// Reads what is there within 1 s (the master side of an echo may come in pieces).
static size_t read_some(int fd, char *buf, size_t cap, size_t want) {
  size_t n = 0;
  while (n < want) {
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, 1000);
    CHECK(r >= 0);
    if (r == 0) break;
    ssize_t got = read(fd, buf + n, cap - n);
    CHECK(got > 0);
    n += (size_t)got;
  }
  buf[n] = '\0';
  return n;
}

TEST(open_and_unlock) {
  int m = open_master();
  char *name = ptsname(m);
  CHECK(name != NULL);
  CHECK(strncmp(name, "/dev/pts/", 9) == 0);
  unsigned n = 0;
  CHECK_OK(ioctl(m, TIOCGPTN, &n));
  char want[32];
  snprintf(want, sizeof(want), "/dev/pts/%u", n);
  CHECK(strcmp(name, want) == 0);
  CHECK_ERRNO(open(name, O_RDWR | O_NOCTTY), EIO);  // still locked
  int locked = 0;
  CHECK_OK(ioctl(m, TIOCGPTLCK, &locked));
  CHECK_EQ(locked, 1);
  CHECK_OK(unlockpt(m));
  int s = open_slave(m, O_NOCTTY);
  struct stat st;
  CHECK_OK(fstat(s, &st));
  CHECK(S_ISCHR(st.st_mode));
  CHECK_EQ(major(st.st_rdev), 136u);
  CHECK_EQ(minor(st.st_rdev), n);
  CHECK(isatty(s));
  CHECK(isatty(m));
  CHECK_ERRNO(ioctl(s, TIOCGPTN, &n), ENOTTY);
  CHECK_ERRNO(lseek(s, 0, SEEK_SET), ESPIPE);
  // TIOCGPTPEER opens the same slave.
  int s2 = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  CHECK(s2 >= 0);
  struct stat st2;
  CHECK_OK(fstat(s2, &st2));
  CHECK_EQ(st2.st_rdev, st.st_rdev);
  CHECK_OK(close(s2));
  CHECK_OK(close(s));
  CHECK_OK(close(m));
}

TEST(default_termios) {
  int s;
  int m = open_pair(&s);
  struct termios t;
  CHECK_OK(tcgetattr(s, &t));
  CHECK_EQ(t.c_iflag, (tcflag_t)(ICRNL | IXON));
  CHECK_EQ(t.c_oflag, (tcflag_t)(OPOST | ONLCR));
  CHECK_EQ(t.c_lflag, (tcflag_t)(ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN));
  CHECK_EQ(t.c_cc[VINTR], 3);
  CHECK_EQ(t.c_cc[VEOF], 4);
  CHECK_EQ(t.c_cc[VERASE], 0177);
  CHECK_EQ(cfgetospeed(&t), (speed_t)B38400);
  // The master's termios calls act on the slave's settings.
  CHECK_OK(tcgetattr(m, &t));
  CHECK_EQ(t.c_lflag, (tcflag_t)(ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN));
  CHECK_OK(close(s));
  CHECK_OK(close(m));
}

TEST(canonical_echo_erase) {
  int s;
  int m = open_pair(&s);
  char buf[256];
  CHECK_EQ(write(m, "hello\n", 6), 6);
  CHECK_EQ(read(s, buf, sizeof(buf)), 6);
  CHECK(memcmp(buf, "hello\n", 6) == 0);
  read_some(m, buf, sizeof(buf) - 1, 7);
  CHECK(strcmp(buf, "hello\r\n") == 0);
  // Erase, and a line read in two parts.
  CHECK_EQ(write(m, "abc\177d\r", 6), 6);
  CHECK_EQ(read(s, buf, 2), 2);
  CHECK(memcmp(buf, "ab", 2) == 0);
  CHECK_EQ(read(s, buf, sizeof(buf)), 2);
  CHECK(memcmp(buf, "d\n", 2) == 0);
  read_some(m, buf, sizeof(buf) - 1, 10);
  CHECK(strcmp(buf, "abc\b \bd\r\n") == 0);
  // Kill the line; a control character echoes as ^X.
  CHECK_EQ(write(m, "xy\025\001z\n", 6), 6);
  CHECK_EQ(read(s, buf, sizeof(buf)), 3);
  CHECK(memcmp(buf, "\001z\n", 3) == 0);
  // EOF on an empty line reads as 0; with text, it ends the line without a newline.
  CHECK_EQ(write(m, "\004", 1), 1);
  CHECK_EQ(read(s, buf, sizeof(buf)), 0);
  CHECK_EQ(write(m, "ab\004", 3), 3);
  CHECK_EQ(read(s, buf, sizeof(buf)), 2);
  // Output processing: \n becomes \r\n.
  read_some(m, buf, sizeof(buf) - 1, 64);
  CHECK_EQ(write(s, "out\n", 4), 4);
  read_some(m, buf, sizeof(buf) - 1, 5);
  CHECK(strcmp(buf, "out\r\n") == 0);
  int avail = -1;
  CHECK_EQ(write(m, "q\n", 2), 2);
  struct pollfd p = {s, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 1000), 1);  // the host's line discipline runs asynchronously
  CHECK_OK(ioctl(s, FIONREAD, &avail));
  CHECK_EQ(avail, 2);
  CHECK_OK(tcflush(s, TCIFLUSH));
  CHECK_OK(ioctl(s, FIONREAD, &avail));
  CHECK_EQ(avail, 0);
  CHECK_OK(close(s));
  CHECK_OK(close(m));
}

TEST(raw_mode) {
  int s;
  int m = open_pair(&s);
  struct termios t;
  CHECK_OK(tcgetattr(s, &t));
  cfmakeraw(&t);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  CHECK_OK(tcsetattr(s, TCSANOW, &t));
  char buf[64];
  CHECK_EQ(read(s, buf, sizeof(buf)), 0);  // VMIN 0, VTIME 0: nothing there, no wait
  CHECK_EQ(write(m, "x\r", 2), 2);
  CHECK_EQ(read(s, buf, sizeof(buf)), 2);
  CHECK(memcmp(buf, "x\r", 2) == 0);  // no ICRNL, no echo
  t.c_cc[VTIME] = 1;  // 0.1 s
  CHECK_OK(tcsetattr(s, TCSANOW, &t));
  int64_t start = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_EQ(read(s, buf, sizeof(buf)), 0);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - start >= 50000000);
  t.c_cc[VMIN] = 3;
  t.c_cc[VTIME] = 0;
  CHECK_OK(tcsetattr(s, TCSANOW, &t));
  CHECK_EQ(write(m, "abc", 3), 3);
  CHECK_EQ(read(s, buf, sizeof(buf)), 3);
  struct pollfd p = {m, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 0), 0);  // nothing echoed
  CHECK_OK(close(s));
  CHECK_OK(close(m));
}

TEST(window_size) {
  int s;
  int m = open_pair(&s);
  struct winsize ws = {24, 80, 0, 0}, got;
  CHECK_OK(ioctl(m, TIOCSWINSZ, &ws));
  CHECK_OK(ioctl(s, TIOCGWINSZ, &got));
  CHECK_EQ(got.ws_row, 24);
  CHECK_EQ(got.ws_col, 80);
  CHECK_OK(close(s));
  CHECK_OK(close(m));
}

// A child that makes the slave its controlling terminal, tells the parent over `ready`, and
// then does `what`.
static pid_t session_child(int m, int ready, void (*what)(int slave)) {
  (void)ready;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid != 0) return pid;
  // Whoever started us may have ignored these (a shell's background job ignores SIGINT).
  signal(SIGINT, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  signal(SIGTTIN, SIG_DFL);
  if (setsid() < 0) _exit(10);
  int fd = open("/dev/tty", O_RDWR);
  if (fd >= 0 || errno != ENXIO) _exit(11);
  int s = open(ptsname(m), O_RDWR | O_NOCTTY);
  if (s < 0) _exit(12);
  close(m);  // the parent's close of the master must be the last one (hangup)
  if (ioctl(s, TIOCSCTTY, 0) != 0) _exit(13);
  pid_t sid = -1;
  if (ioctl(s, TIOCGSID, &sid) != 0 || sid != getpid()) _exit(14);
  if (tcgetpgrp(s) != getpid()) _exit(15);
  fd = open("/dev/tty", O_RDWR);
  if (fd < 0) _exit(16);
  struct stat a;
  if (fstat(fd, &a) != 0 || a.st_rdev != makedev(5, 0)) _exit(17);
  if (ioctl(fd, TIOCGSID, &sid) != 0 || sid != getpid()) _exit(18);
  close(fd);
  what(s);
  _exit(0);
}

static void wait_forever(int s) {
  (void)s;
  char c = 'r';
  if (write(100, &c, 1) != 1) _exit(20);  // fd 100: the ready pipe (see ready_pipe)
  for (;;) pause();
}

static void expect_ready(int ready) {
  char c;
  CHECK_EQ(read(ready, &c, 1), 1);
}

static int ready_pipe(int *rd) {
  int p[2];
  CHECK_OK(pipe(p));
  CHECK(dup2(p[1], 100) == 100);
  CHECK_OK(close(p[1]));
  *rd = p[0];
  return 100;
}

TEST(ctrl_c_signals_foreground) {
  int m = open_unlocked_master();
  int rd;
  int w = ready_pipe(&rd);
  pid_t pid = session_child(m, w, wait_forever);
  CHECK_OK(close(w));
  expect_ready(rd);
  CHECK_EQ(write(m, "\003", 1), 1);
  CHECK_KILLED(pid, SIGINT);
  CHECK_OK(close(rd));
  CHECK_OK(close(m));
}

TEST(hangup_on_master_close) {
  int m = open_unlocked_master();
  int rd;
  int w = ready_pipe(&rd);
  pid_t pid = session_child(m, w, wait_forever);
  CHECK_OK(close(w));
  expect_ready(rd);
  CHECK_OK(close(m));
  CHECK_KILLED(pid, SIGHUP);
  CHECK_OK(close(rd));
}

static void background_reader(int s) {
  pid_t bg = fork();
  if (bg < 0) _exit(30);
  if (bg == 0) {
    setpgid(0, 0);
    char c;
    (void)read(s, &c, 1);  // a background read: stopped by SIGTTIN
    _exit(31);
  }
  int st = 0;
  if (waitpid(bg, &st, WUNTRACED) != bg) _exit(32);
  if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTTIN) _exit(33);
  kill(bg, SIGKILL);
  waitpid(bg, &st, 0);
  // Ignoring SIGTTIN makes the read fail with EIO instead.
  bg = fork();
  if (bg == 0) {
    setpgid(0, 0);
    signal(SIGTTIN, SIG_IGN);
    char c;
    _exit(read(s, &c, 1) == -1 && errno == EIO ? 0 : 34);
  }
  if (waitpid(bg, &st, 0) != bg || !WIFEXITED(st)) _exit(35);
  _exit(WEXITSTATUS(st));
}

TEST(background_read_stops) {
  int m = open_unlocked_master();
  int rd;
  int w = ready_pipe(&rd);
  pid_t pid = session_child(m, w, background_reader);
  CHECK_OK(close(w));
  CHECK_EXIT(pid, 0);
  CHECK_OK(close(rd));
  CHECK_OK(close(m));
}

TEST(slave_gone_master_eio) {
  int s;
  int m = open_pair(&s);
  CHECK_EQ(write(s, "z", 1), 1);
  CHECK_OK(close(s));
  char buf[8];
  CHECK_EQ(read(m, buf, sizeof(buf)), 1);
  CHECK_ERRNO(read(m, buf, sizeof(buf)), EIO);
  struct pollfd p = {m, POLLIN, 0};
  CHECK_EQ(poll(&p, 1, 0), 1);
  CHECK(p.revents & POLLHUP);
  CHECK_OK(close(m));
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  signal(SIGTTOU, SIG_IGN);
  RUN(open_and_unlock);
  RUN(default_termios);
  RUN(canonical_echo_erase);
  RUN(raw_mode);
  RUN(window_size);
  RUN(ctrl_c_signals_foreground);
  RUN(hangup_on_master_close);
  RUN(background_read_stops);
  RUN(slave_gone_master_eio);
  PASS("pty");
  return 0;
}
