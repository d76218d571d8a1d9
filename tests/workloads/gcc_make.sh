# Workload: build a small C project with make -j2 and gcc -O2 (gcc forks cpp/cc1/as/collect2/ld,
# writes temporaries to /tmp and reads dependency timestamps), run the result, then change one
# source file and rebuild incrementally.
# make's own output is not printed: under -j2 its command lines come in any order. Only its exit
# status, the files it produced and the program's output are.
set -eu
umask 022
work=$(mktemp -d /tmp/wl.XXXXXX)
trap 'cd / && rm -rf "$work"' EXIT  # on failure too; the rm at the end is part of the test
cd "$work"

cat >proj.h <<'EOF'
#ifndef PROJ_H
#define PROJ_H
#include <stddef.h>
#include <stdint.h>

#define SCALE 3

struct item {
  char name[16];
  long value;
};

/* items.c */
size_t make_items(struct item *out, size_t n);
void sort_items(struct item *items, size_t n);

/* hash.c */
uint32_t fnv1a(const void *data, size_t len);

/* primes.c */
size_t count_primes(size_t limit);
long scaled(long x);
#endif
EOF

cat >items.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proj.h"

size_t make_items(struct item *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    snprintf(out[i].name, sizeof out[i].name, "item-%03u", (unsigned)(i % 1000));
    out[i].value = scaled((long)((i * 7919) % 1009));
  }
  return n;
}

static int by_value(const void *a, const void *b) {
  const struct item *x = a, *y = b;
  if (x->value != y->value) return x->value < y->value ? -1 : 1;
  return strcmp(x->name, y->name);
}

void sort_items(struct item *items, size_t n) { qsort(items, n, sizeof *items, by_value); }
EOF

cat >hash.c <<'EOF'
#include "proj.h"

uint32_t fnv1a(const void *data, size_t len) {
  const unsigned char *p = data;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 16777619u;
  }
  return h;
}
EOF

cat >primes.c <<'EOF'
#include <stdlib.h>
#include <string.h>
#include "proj.h"

size_t count_primes(size_t limit) {
  char *composite = calloc(limit + 1, 1);
  size_t count = 0;
  if (!composite) return 0;
  for (size_t i = 2; i <= limit; i++) {
    if (composite[i]) continue;
    count++;
    for (size_t j = i * i; j <= limit; j += i) composite[j] = 1;
  }
  free(composite);
  return count;
}

long scaled(long x) { return x * SCALE; }
EOF

cat >main.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "proj.h"

#define N 200

int main(void) {
  static struct item items[N];
  size_t n = make_items(items, N);
  sort_items(items, n);
  printf("first %s %ld\n", items[0].name, items[0].value);
  printf("last %s %ld\n", items[n - 1].name, items[n - 1].value);
  long sum = 0;
  for (size_t i = 0; i < n; i++) sum += items[i].value;
  printf("sum %ld\n", sum);
  printf("fnv1a %08x\n", (unsigned)fnv1a(items, sizeof items));
  printf("primes below 1000000: %zu\n", count_primes(1000000));
  return 0;
}
EOF

cat >Makefile <<'EOF'
CC = gcc
CFLAGS = -O2 -Wall -Wextra
OBJS = main.o items.o hash.o primes.o

prog: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

%.o: %.c proj.h
	$(CC) $(CFLAGS) -c -o $@ $<

clean:
	rm -f prog $(OBJS)

.PHONY: clean
EOF

status=0
make -j2 >make.log 2>&1 || status=$?
echo "make: exit status $status"
if [ "$status" -ne 0 ]; then cat make.log >&2; fi
# Compiler diagnostics name files relative to the project, so they can be compared too.
grep -e 'warning:' -e 'error:' make.log || true
ls
./prog

# Nothing to do the second time (mtimes compared correctly).
make -j2 2>&1

# Change the scale in primes.c and date it ahead so it is surely newer than primes.o: make must
# rebuild primes.o and relink, and the program's output follows.
sed -i 's/return x \* SCALE;/return x * SCALE * 2;/' primes.c
touch -d '2099-01-01 00:00:00 UTC' primes.c
status=0
make -j2 >make.log 2>&1 || status=$?
echo "rebuild: exit status $status, $(grep -c -- ' -c ' make.log) object(s) compiled"
./prog | head -n 3

make -s clean
ls
cd /
rm -rf "$work"
