// loopback MODE N: sockets inside one sandbox, between two threads.
//   tcp_pingpong N  N one-byte round trips over loopback TCP; prints "ns_per_op X"
//   tcp_stream N    N MiB one way over loopback TCP in 256 KiB writes; prints "bytes B" and
//   unix_stream N   "total_ns T" (the same over a unix socketpair)
// The clock starts once the connection exists, so set-up is not counted.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kChunk = 256 * 1024 };

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void Die(const char* what) {
  perror(what);
  exit(1);
}

// A connected pair: loopback TCP (with TCP_NODELAY) or a unix socketpair.
static void Connect(int tcp, int fds[2]) {
  if (!tcp) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) Die("socketpair");
    return;
  }
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof(a)) != 0 || listen(l, 1) != 0 ||
      getsockname(l, (struct sockaddr*)&a, &len) != 0) {
    Die("listen");
  }
  fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (fds[0] < 0 || connect(fds[0], (struct sockaddr*)&a, sizeof(a)) != 0) Die("connect");
  fds[1] = accept(l, NULL, NULL);
  if (fds[1] < 0) Die("accept");
  int one = 1;
  setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  close(l);
}

static long g_n;
static int g_fd;

static void* Echo(void* arg) {
  (void)arg;
  char c;
  for (long i = 0; i < g_n; i++) {
    if (read(g_fd, &c, 1) != 1 || write(g_fd, &c, 1) != 1) Die("echo");
  }
  return NULL;
}

static void* Drain(void* arg) {
  long long* total = arg;
  char* buf = malloc(kChunk);
  ssize_t r;
  while ((r = read(g_fd, buf, kChunk)) > 0) *total += r;
  if (r < 0) Die("read");
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3 || atol(argv[2]) <= 0) {
    fprintf(stderr, "usage: %s tcp_pingpong|tcp_stream|unix_stream N\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  long n = atol(argv[2]);
  int fds[2];
  Connect(strcmp(mode, "unix_stream") != 0, fds);
  pthread_t th;
  g_fd = fds[1];
  if (strcmp(mode, "tcp_pingpong") == 0) {
    g_n = n;
    pthread_create(&th, NULL, Echo, NULL);
    char c = 'x';
    double start = NowNs();
    for (long i = 0; i < n; i++) {
      if (write(fds[0], &c, 1) != 1 || read(fds[0], &c, 1) != 1) Die("ping");
    }
    double elapsed = NowNs() - start;
    pthread_join(th, NULL);
    printf("ns_per_op %.0f\n", elapsed / n);
    return 0;
  }
  long long total = 0;
  pthread_create(&th, NULL, Drain, &total);
  char* buf = calloc(1, kChunk);
  long long want = n * 1048576LL;
  double start = NowNs();
  for (long long sent = 0; sent < want;) {
    ssize_t w = write(fds[0], buf, kChunk);
    if (w <= 0) Die("write");
    sent += w;
  }
  shutdown(fds[0], SHUT_WR);
  pthread_join(th, NULL);
  double elapsed = NowNs() - start;
  printf("bytes %lld\ntotal_ns %.0f\n", total, elapsed);
  return 0;
}
