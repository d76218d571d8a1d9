// file_read PATH BLOCK_SIZE: reads PATH from start to end in BLOCK_SIZE read(2) calls and
// prints "bytes N" and "total_ns N". The clock starts after open, so the path walk and sandbox
// start-up are not counted.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3 || atol(argv[2]) <= 0) {
    fprintf(stderr, "usage: %s PATH BLOCK_SIZE\n", argv[0]);
    return 2;
  }
  size_t block = atol(argv[2]);
  char* buf = malloc(block);
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (buf == NULL || fd < 0) {
    perror(argv[1]);
    return 1;
  }
  long long total = 0;
  double start = NowNs();
  for (;;) {
    ssize_t n = read(fd, buf, block);
    if (n < 0) {
      perror("read");
      return 1;
    }
    if (n == 0) break;
    total += n;
  }
  double elapsed = NowNs() - start;
  printf("bytes %lld\ntotal_ns %.0f\n", total, elapsed);
  return 0;
}
