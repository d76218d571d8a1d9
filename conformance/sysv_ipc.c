// System V shared memory, semaphores and message queues, and POSIX message queues.
//
// Natively these objects live in the host's IPC namespace, so every key is chosen fresh
// (IPC_CREAT|IPC_EXCL until one is free) and every object is removed again by its case.
#include "common.h"

#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <linux/futex.h>
#include <sys/shm.h>

#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#endif

static const long kPage = 4096;

union semun {
  int val;
  struct semid_ds *buf;
  unsigned short *array;
  struct seminfo *info;
};

// A key no object uses yet: creates an object of `kind` under it with `make`.
static key_t fresh_key(int (*make)(key_t)) {
  for (unsigned i = 0;; i++) {
    key_t key = (key_t)(0x53000000u + (((unsigned)getpid() * 131u + i * 7919u) & 0xffffffu));
    if (make(key) >= 0) return key;
    CHECK_EQ(errno, EEXIST);
  }
}

static int g_made_id;
static int make_shm(key_t key) { return g_made_id = shmget(key, 3 * kPage, IPC_CREAT | IPC_EXCL | 0600); }
static int make_sem(key_t key) { return g_made_id = semget(key, 2, IPC_CREAT | IPC_EXCL | 0600); }
static int make_msg(key_t key) { return g_made_id = msgget(key, IPC_CREAT | IPC_EXCL | 0600); }

static struct shmid_ds shm_stat(int id) {
  struct shmid_ds ds;
  CHECK_OK(shmctl(id, IPC_STAT, &ds));
  return ds;
}

static int semval(int id, int num) { return semctl(id, num, GETVAL); }

// Waits until `count` tasks wait on semaphore `num` (GETNCNT, or GETZCNT if `zero`).
static void wait_sem_waiters(int id, int num, int zero, int count) {
  for (int i = 0; semctl(id, num, zero ? GETZCNT : GETNCNT) != count; i++) {
    CHECK(i < 20000);
    usleep(500);
  }
}

static void on_signal(int sig) { (void)sig; }

// --- shared memory ---

TEST(shm_private_fork) {
  int id = shmget(IPC_PRIVATE, 10000, 0640);
  CHECK(id >= 0);
  struct shmid_ds ds = shm_stat(id);
  CHECK_EQ(ds.shm_segsz, 10000);
  CHECK_EQ(ds.shm_nattch, 0);
  CHECK_EQ(ds.shm_cpid, getpid());
  CHECK_EQ(ds.shm_lpid, 0);
  CHECK_EQ(ds.shm_atime, 0);
  CHECK_EQ(ds.shm_dtime, 0);
  CHECK(ds.shm_ctime != 0);
  CHECK_EQ(ds.shm_perm.mode, 0640);
  CHECK_EQ(ds.shm_perm.__key, IPC_PRIVATE);
  CHECK_EQ(ds.shm_perm.uid, geteuid());
  CHECK_EQ(ds.shm_perm.cgid, getegid());
  char *p = shmat(id, NULL, 0);
  CHECK(p != (void *)-1);
  CHECK_EQ((uintptr_t)p % kPage, 0);
  CHECK_EQ(p[0], 0);
  CHECK_EQ(p[9999], 0);
  strcpy(p, "parent");
  ds = shm_stat(id);
  CHECK_EQ(ds.shm_nattch, 1);
  CHECK_EQ(ds.shm_lpid, getpid());
  CHECK(ds.shm_atime != 0);
  int go[2], ready[2];
  CHECK_OK(pipe(go));
  CHECK_OK(pipe(ready));
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (strcmp(p, "parent") != 0) _exit(2);
    strcpy(p + 100, "child");
    char c = 'r';
    conf_write_full(ready[1], &c, 1);
    conf_read_full(go[0], &c, 1);
    _exit(0);
  }
  char c;
  conf_read_full(ready[0], &c, 1);
  CHECK_EQ(strcmp(p + 100, "child"), 0);
  CHECK_EQ(shm_stat(id).shm_nattch, 2);
  conf_write_full(go[1], &c, 1);
  CHECK_EXIT(pid, 0);
  ds = shm_stat(id);
  CHECK_EQ(ds.shm_nattch, 1);
  CHECK_EQ(ds.shm_lpid, pid);  // the exit detached
  CHECK(ds.shm_dtime != 0);
  CHECK_OK(shmdt(p));
  CHECK_EQ(shm_stat(id).shm_nattch, 0);
  CHECK_EQ(shm_stat(id).shm_lpid, getpid());
  CHECK_ERRNO(shmdt(p), EINVAL);
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
  CHECK_ERRNO(shmctl(id, IPC_STAT, &ds), EINVAL);
  CHECK_ERRNO(shmat(id, NULL, 0), EINVAL);
  close(go[0]), close(go[1]), close(ready[0]), close(ready[1]);
}

// The child mode: attach the segment of `key` and leave a mark next to the parent's.
static int shm_child(const char *keystr) {
  key_t key = (key_t)strtoul(keystr, NULL, 0);
  int id = shmget(key, 0, 0);
  if (id < 0) return 10;
  char *p = shmat(id, NULL, 0);
  if (p == (void *)-1) return 11;
  if (strcmp(p, "by key") != 0) return 12;
  strcpy(p + kPage, "exec'd child");
  struct shmid_ds ds;
  if (shmctl(id, IPC_STAT, &ds) != 0 || ds.shm_nattch != 2) return 13;
  return 0;
}

TEST(shm_key_unrelated) {
  key_t key = fresh_key(make_shm);
  int id = g_made_id;
  CHECK_EQ(shmget(key, 0, 0), id);
  CHECK_EQ(shmget(key, 3 * kPage, IPC_CREAT | 0600), id);
  CHECK_ERRNO(shmget(key, 3 * kPage, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
  CHECK_ERRNO(shmget(key, 4 * kPage, 0), EINVAL);
  CHECK_ERRNO(shmget(key + 1 == 0 ? 5 : key ^ 0x00800000, 100, 0), ENOENT);
  CHECK_EQ(shm_stat(id).shm_perm.__key, key);
  char *p = shmat(id, NULL, 0);
  CHECK(p != (void *)-1);
  strcpy(p, "by key");
  char keystr[32];
  snprintf(keystr, sizeof(keystr), "%d", key);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(shmdt(p));
    execl(conf_self, conf_self, "shm-child", keystr, (char *)NULL);
    _exit(99);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(strcmp(p + kPage, "exec'd child"), 0);
  CHECK_EQ(shm_stat(id).shm_nattch, 1);
  CHECK_EQ(shm_stat(id).shm_lpid, pid);
  // Attachments do not survive exec.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    execl(conf_self, conf_self, "shm-nattch", keystr, (char *)NULL);
    _exit(99);
  }
  CHECK_EXIT(pid, 0);
  CHECK_OK(shmdt(p));
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
}

static int shm_nattch_child(const char *keystr) {
  int id = shmget((key_t)strtoul(keystr, NULL, 0), 0, 0);
  struct shmid_ds ds;
  if (id < 0 || shmctl(id, IPC_STAT, &ds) != 0) return 20;
  return ds.shm_nattch == 1 ? 0 : 21;
}

TEST(shm_rmid_while_attached) {
  key_t key = fresh_key(make_shm);
  int id = g_made_id;
  char *p = shmat(id, NULL, 0);
  CHECK(p != (void *)-1);
  char *q = shmat(id, NULL, SHM_RDONLY);
  CHECK(q != (void *)-1 && q != p);
  CHECK_EQ(shm_stat(id).shm_nattch, 2);
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
  struct shmid_ds ds = shm_stat(id);
  CHECK_EQ(ds.shm_perm.mode & SHM_DEST, SHM_DEST);
  CHECK_EQ(ds.shm_perm.__key, IPC_PRIVATE);
  CHECK_ERRNO(shmget(key, 0, 0), ENOENT);
  strcpy(p, "still here");
  CHECK_EQ(strcmp(q, "still here"), 0);
  CHECK_OK(shmdt(q));
  CHECK_EQ(shm_stat(id).shm_nattch, 1);
  CHECK_OK(shmdt(p));
  CHECK_ERRNO(shmctl(id, IPC_STAT, &ds), EINVAL);
}

TEST(shm_rdonly_segv) {
  int id = shmget(IPC_PRIVATE, kPage, 0600);
  CHECK(id >= 0);
  char *p = shmat(id, NULL, 0);
  CHECK(p != (void *)-1);
  p[10] = 42;
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    volatile char *r = shmat(id, NULL, SHM_RDONLY);
    if (r == (void *)-1 || r[10] != 42) _exit(3);
    r[10] = 1;
    _exit(4);
  }
  CHECK_KILLED(pid, SIGSEGV);
  CHECK_EQ(p[10], 42);
  CHECK_OK(shmdt(p));
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
}

TEST(shm_addresses) {
  int id = shmget(IPC_PRIVATE, 2 * kPage, 0600);
  CHECK(id >= 0);
  char *area = mmap(NULL, 8 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(area != MAP_FAILED);
  CHECK_OK(munmap(area + 4 * kPage, 4 * kPage));
  char *free_at = area + 4 * kPage;
  CHECK_ERRNO(shmat(id, free_at + 1, 0), EINVAL);
  char *r = shmat(id, free_at + 1, SHM_RND);
  CHECK(r == free_at);
  r[0] = 'x';
  CHECK_ERRNO(shmat(id, free_at, 0), EINVAL);  // overlaps without SHM_REMAP
  CHECK_ERRNO(shmat(id, NULL, SHM_REMAP), EINVAL);
  char *over = shmat(id, area, SHM_REMAP);  // replaces the anonymous pages
  CHECK(over == area);
  CHECK_EQ(over[0], 'x');
  CHECK_EQ(shm_stat(id).shm_nattch, 2);
  CHECK_ERRNO(shmdt(area + 1), EINVAL);
  CHECK_ERRNO(shmdt(area + kPage), EINVAL);
  CHECK_OK(shmdt(area));
  CHECK_OK(shmdt(free_at));
  CHECK_EQ(shm_stat(id).shm_nattch, 0);
  CHECK_OK(munmap(area, 4 * kPage));
  // A partial munmap splits the attachment; shmdt still removes what is left of it.
  r = shmat(id, NULL, 0);
  CHECK(r != (void *)-1);
  CHECK_OK(munmap(r + kPage, kPage));
  CHECK_EQ(shm_stat(id).shm_nattch, 1);
  CHECK_OK(shmdt(r));
  CHECK_EQ(shm_stat(id).shm_nattch, 0);
  CHECK_ERRNO(shmat(-1, NULL, 0), EINVAL);
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
}

TEST(shm_ctl) {
  int id = shmget(IPC_PRIVATE, 100, 0600);
  CHECK(id >= 0);
  struct shmid_ds ds = shm_stat(id);
  ds.shm_perm.mode = 0444 | 01000;  // only the permission bits change
  CHECK_OK(shmctl(id, IPC_SET, &ds));
  CHECK_EQ(shm_stat(id).shm_perm.mode, 0444);
  CHECK_OK(shmctl(id, SHM_LOCK, NULL));
  CHECK_EQ(shm_stat(id).shm_perm.mode, 0444 | SHM_LOCKED);
  CHECK_OK(shmctl(id, SHM_UNLOCK, NULL));
  CHECK_EQ(shm_stat(id).shm_perm.mode, 0444);
  struct shminfo info;
  int max = shmctl(0, IPC_INFO, (struct shmid_ds *)&info);
  CHECK(max >= 0);
  CHECK(info.shmmni > 0 && info.shmmin == 1 && info.shmmax >= 0x2000000);
  struct shm_info sinfo;
  CHECK_EQ(shmctl(0, SHM_INFO, (struct shmid_ds *)&sinfo), max);
  CHECK(sinfo.used_ids >= 1);
  int found = 0;
  for (int idx = 0; idx <= max; idx++) {
    if (shmctl(idx, SHM_STAT_ANY, &ds) == id) {
      found++;
      CHECK_EQ(ds.shm_segsz, 100);
      CHECK_EQ(shmctl(idx, SHM_STAT, &ds), id);
    }
  }
  CHECK_EQ(found, 1);
  CHECK_ERRNO(shmctl(id, 12345, &ds), EINVAL);
  CHECK_ERRNO(shmctl(-1, IPC_STAT, &ds), EINVAL);
  CHECK_ERRNO(shmget(IPC_PRIVATE, 0, 0600), EINVAL);
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
  CHECK_ERRNO(shmctl(id, IPC_RMID, NULL), EINVAL);
}

// --- semaphores ---

TEST(sem_values) {
  key_t key = fresh_key(make_sem);
  int id = g_made_id;
  CHECK_EQ(semget(key, 2, 0), id);
  CHECK_EQ(semget(key, 0, 0), id);
  CHECK_ERRNO(semget(key, 3, 0), EINVAL);
  CHECK_ERRNO(semget(key, 2, IPC_CREAT | IPC_EXCL), EEXIST);
  CHECK_ERRNO(semget(IPC_PRIVATE, 0, 0600), EINVAL);
  CHECK_EQ(semval(id, 0), 0);
  CHECK_OK(semctl(id, 1, SETVAL, (union semun){.val = 5}));
  CHECK_EQ(semval(id, 1), 5);
  CHECK_EQ(semctl(id, 1, GETPID), getpid());
  CHECK_ERRNO(semctl(id, 0, SETVAL, (union semun){.val = 40000}), ERANGE);
  CHECK_ERRNO(semctl(id, 0, SETVAL, (union semun){.val = -1}), ERANGE);
  CHECK_ERRNO(semctl(id, 2, GETVAL), EINVAL);
  unsigned short all[2] = {7, 9};
  CHECK_OK(semctl(id, 0, SETALL, (union semun){.array = all}));
  all[0] = all[1] = 0;
  CHECK_OK(semctl(id, 0, GETALL, (union semun){.array = all}));
  CHECK(all[0] == 7 && all[1] == 9);
  struct sembuf ops[2] = {{0, -3, 0}, {1, 4, 0}};
  CHECK_OK(semop(id, ops, 2));
  CHECK_EQ(semval(id, 0), 4);
  CHECK_EQ(semval(id, 1), 13);
  // All or nothing: the second operation would block, so the first does not happen.
  struct sembuf fail[2] = {{0, -1, IPC_NOWAIT}, {1, -20, IPC_NOWAIT}};
  CHECK_ERRNO(semop(id, fail, 2), EAGAIN);
  CHECK_EQ(semval(id, 0), 4);
  struct sembuf zero = {0, 0, IPC_NOWAIT};
  CHECK_ERRNO(semop(id, &zero, 1), EAGAIN);
  struct sembuf big = {5, 1, 0};
  CHECK_ERRNO(semop(id, &big, 1), EFBIG);
  struct sembuf over = {1, 32767, 0};
  CHECK_ERRNO(semop(id, &over, 1), ERANGE);
  CHECK_ERRNO(semop(id, ops, 0), EINVAL);
  struct semid_ds ds;
  CHECK_OK(semctl(id, 0, IPC_STAT, (union semun){.buf = &ds}));
  CHECK_EQ(ds.sem_nsems, 2);
  CHECK_EQ(ds.sem_perm.__key, key);
  CHECK_EQ(ds.sem_perm.mode, 0600);
  CHECK(ds.sem_otime != 0);
  struct seminfo info;
  int max = semctl(0, 0, IPC_INFO, (union semun){.info = &info});
  CHECK(max >= 0);
  CHECK(info.semmsl >= 250 && info.semvmx == 32767 && info.semopm >= 32);
  int found = 0;
  for (int idx = 0; idx <= max; idx++) {
    if (semctl(idx, 0, SEM_STAT_ANY, (union semun){.buf = &ds}) == id) found++;
  }
  CHECK_EQ(found, 1);
  CHECK_OK(semctl(id, 0, IPC_RMID));
  CHECK_ERRNO(semval(id, 0), EINVAL);
}

TEST(sem_blocking_undo) {
  int id = semget(IPC_PRIVATE, 2, 0600);
  CHECK(id >= 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct sembuf down = {0, -1, 0};
    if (semop(id, &down, 1) != 0) _exit(2);
    struct sembuf wait_zero = {1, 0, 0};
    if (semop(id, &wait_zero, 1) != 0) _exit(3);
    struct sembuf up = {1, 2, SEM_UNDO};  // undone when we exit
    if (semop(id, &up, 1) != 0) _exit(4);
    _exit(0);
  }
  wait_sem_waiters(id, 0, 0, 1);
  CHECK_EQ(semctl(id, 0, GETZCNT), 0);
  CHECK_OK(semctl(id, 1, SETVAL, (union semun){.val = 1}));
  struct sembuf up = {0, 1, 0};
  CHECK_OK(semop(id, &up, 1));
  wait_sem_waiters(id, 1, 1, 1);
  CHECK_EQ(semval(id, 0), 0);
  CHECK_EQ(semctl(id, 0, GETPID), pid);  // the sleeper's operation completed in its name
  CHECK_OK(semctl(id, 1, SETVAL, (union semun){.val = 0}));
  CHECK_EXIT(pid, 0);
  CHECK_EQ(semval(id, 1), 0);  // 2, then the exit undid it
  CHECK_EQ(semctl(id, 1, GETPID), pid);
  // An undo that would go below zero clamps at zero.
  CHECK_OK(semctl(id, 0, SETVAL, (union semun){.val = 3}));
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct sembuf down = {0, -2, SEM_UNDO};
    _exit(semop(id, &down, 1) == 0 ? 0 : 5);
  }
  CHECK_EXIT(pid, 0);
  CHECK_EQ(semval(id, 0), 3);
  CHECK_OK(semctl(id, 0, IPC_RMID));
}

TEST(sem_eidrm_timeout_eintr) {
  int id = semget(IPC_PRIVATE, 1, 0600);
  CHECK(id >= 0);
  struct sembuf down = {0, -1, 0};
  struct timespec ts = {0, 20 * 1000 * 1000};
  int64_t t0 = conf_now_ns(CLOCK_MONOTONIC);
  CHECK_ERRNO(semtimedop(id, &down, 1, &ts), EAGAIN);
  CHECK(conf_now_ns(CLOCK_MONOTONIC) - t0 >= 19 * 1000 * 1000);
  struct timespec bad = {0, 2000000000L};
  CHECK_ERRNO(semtimedop(id, &down, 1, &bad), EINVAL);
  // A signal interrupts the sleep with EINTR, SA_RESTART or not.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigaction(SIGUSR1, &sa, NULL);
    if (semop(id, &down, 1) != -1 || errno != EINTR) _exit(2);
    _exit(0);
  }
  wait_sem_waiters(id, 0, 0, 1);
  CHECK_OK(kill(pid, SIGUSR1));
  CHECK_EXIT(pid, 0);
  CHECK_EQ(semctl(id, 0, GETNCNT), 0);
  // Removal wakes the sleepers with EIDRM.
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    if (semop(id, &down, 1) != -1 || errno != EIDRM) _exit(3);
    _exit(0);
  }
  wait_sem_waiters(id, 0, 0, 1);
  CHECK_OK(semctl(id, 0, IPC_RMID));
  CHECK_EXIT(pid, 0);
}

// --- message queues ---

struct msgbuf64 {
  long mtype;
  char mtext[256];
};

static void msg_send(int id, long type, const char *text) {
  struct msgbuf64 m = {.mtype = type};
  strcpy(m.mtext, text);
  CHECK_OK(msgsnd(id, &m, strlen(text) + 1, 0));
}

static long msg_recv(int id, long type, int flags, char *out) {
  struct msgbuf64 m;
  ssize_t n = msgrcv(id, &m, sizeof(m.mtext), type, flags);
  if (n < 0) return -1;
  strcpy(out, m.mtext);
  return m.mtype;
}

TEST(msg_types) {
  key_t key = fresh_key(make_msg);
  int id = g_made_id;
  CHECK_EQ(msgget(key, 0), id);
  CHECK_ERRNO(msgget(key, IPC_CREAT | IPC_EXCL), EEXIST);
  msg_send(id, 3, "three");
  msg_send(id, 1, "one");
  msg_send(id, 2, "two");
  msg_send(id, 1, "one again");
  struct msqid_ds ds;
  CHECK_OK(msgctl(id, IPC_STAT, &ds));
  CHECK_EQ(ds.msg_qnum, 4);
  CHECK_EQ(ds.msg_cbytes, 6 + 4 + 4 + 10);
  CHECK_EQ(ds.msg_lspid, getpid());
  CHECK_EQ(ds.msg_lrpid, 0);
  char text[256];
  CHECK_EQ(msg_recv(id, 2, 0, text), 2);
  CHECK_EQ(strcmp(text, "two"), 0);
  CHECK_EQ(msg_recv(id, -5, 0, text), 1);  // the lowest type <= 5, first of those
  CHECK_EQ(strcmp(text, "one"), 0);
  CHECK_EQ(msg_recv(id, 1, MSG_EXCEPT, text), 3);
  CHECK_ERRNO(msg_recv(id, 7, IPC_NOWAIT, text), ENOMSG);
  struct msgbuf64 m;
  CHECK_ERRNO(msgrcv(id, &m, 3, 0, 0), E2BIG);  // and the message stays
  CHECK_EQ(msgrcv(id, &m, 3, 0, MSG_NOERROR), 3);
  CHECK_EQ(memcmp(m.mtext, "one", 3), 0);
  CHECK_ERRNO(msg_recv(id, 0, IPC_NOWAIT, text), ENOMSG);
  CHECK_OK(msgctl(id, IPC_STAT, &ds));
  CHECK_EQ(ds.msg_qnum, 0);
  CHECK_EQ(ds.msg_lrpid, getpid());
  m.mtype = 0;
  CHECK_ERRNO(msgsnd(id, &m, 1, 0), EINVAL);
  m.mtype = 1;
  CHECK_ERRNO(msgsnd(id, &m, 1 << 20, 0), EINVAL);
  CHECK_ERRNO(msgsnd(-1, &m, 1, 0), EINVAL);
  struct msginfo info;
  int max = msgctl(0, IPC_INFO, (struct msqid_ds *)&info);
  CHECK(max >= 0);
  CHECK(info.msgmax >= 8192 && info.msgmnb >= 16384 && info.msgmni > 0);
  int found = 0;
  for (int idx = 0; idx <= max; idx++) {
    if (msgctl(idx, MSG_STAT_ANY, &ds) == id) found++;
  }
  CHECK_EQ(found, 1);
  CHECK_OK(msgctl(id, IPC_RMID, NULL));
  CHECK_ERRNO(msgctl(id, IPC_STAT, &ds), EINVAL);
}

TEST(msg_blocking) {
  int id = msgget(IPC_PRIVATE, 0600);
  CHECK(id >= 0);
  struct msqid_ds ds;
  CHECK_OK(msgctl(id, IPC_STAT, &ds));
  ds.msg_qbytes = 10;
  CHECK_OK(msgctl(id, IPC_SET, &ds));
  CHECK_OK(msgctl(id, IPC_STAT, &ds));
  CHECK_EQ(ds.msg_qbytes, 10);
  msg_send(id, 1, "123456789");  // 10 bytes: the queue is full
  struct msgbuf64 m = {.mtype = 1};
  CHECK_ERRNO(msgsnd(id, &m, 1, IPC_NOWAIT), EAGAIN);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct msgbuf64 c = {.mtype = 2, .mtext = "x"};
    if (msgsnd(id, &c, 2, 0) != 0) _exit(2);  // sleeps until the parent receives
    if (msgrcv(id, &c, sizeof(c.mtext), 5, 0) != 4 || strcmp(c.mtext, "abc") != 0) _exit(3);
    _exit(0);
  }
  char text[256];
  CHECK_EQ(msg_recv(id, 0, 0, text), 1);
  CHECK_EQ(msg_recv(id, 2, 0, text), 2);  // sleeps until the child's send goes in
  CHECK_EQ(strcmp(text, "x"), 0);
  msg_send(id, 5, "abc");
  CHECK_EXIT(pid, 0);
  // Removal wakes a sleeping receiver with EIDRM (or it finds the queue gone: EINVAL).
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    struct msgbuf64 c;
    if (msgrcv(id, &c, sizeof(c.mtext), 0, 0) != -1) _exit(4);
    _exit(errno == EIDRM || errno == EINVAL ? 0 : 5);
  }
  conf_sleep_ms(30);
  CHECK_OK(msgctl(id, IPC_RMID, NULL));
  CHECK_EXIT(pid, 0);
}

// A futex in a segment is one futex for every process, wherever each attached it.
TEST(shm_futex_across_processes) {
  int id = shmget(IPC_PRIVATE, kPage, 0600);
  CHECK(id >= 0);
  int *p = shmat(id, NULL, 0);
  CHECK(p != (void *)-1);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int *q = shmat(id, NULL, 0);  // a second attachment, at another address
    if (q == (void *)-1 || q == p) _exit(2);
    while (__atomic_load_n(&q[1], __ATOMIC_SEQ_CST) == 0) {
      syscall(SYS_futex, &q[1], FUTEX_WAIT, 0, NULL, NULL, 0);
    }
    _exit(__atomic_load_n(&q[1], __ATOMIC_SEQ_CST) == 7 ? 0 : 3);
  }
  conf_sleep_ms(20);
  __atomic_store_n(&p[1], 7, __ATOMIC_SEQ_CST);
  syscall(SYS_futex, &p[1], FUTEX_WAKE, 1, NULL, NULL, 0);
  CHECK_EXIT(pid, 0);
  CHECK_OK(shmdt(p));
  CHECK_OK(shmctl(id, IPC_RMID, NULL));
}

// Another user: the mode bits decide, and only the owner or creator may change or remove.
TEST(ipc_permissions) {
  int shm = shmget(IPC_PRIVATE, kPage, 0640);
  int sem = semget(IPC_PRIVATE, 1, 0604);
  int msg = msgget(IPC_PRIVATE, 0600);
  CHECK(shm >= 0 && sem >= 0 && msg >= 0);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setgid(1000));
    CHECK_OK(setuid(1000));
    struct shmid_ds ds;
    CHECK_ERRNO(shmctl(shm, IPC_STAT, &ds), EACCES);
    CHECK_ERRNO(shmat(shm, NULL, SHM_RDONLY), EACCES);
    CHECK_ERRNO(shmctl(shm, IPC_RMID, NULL), EPERM);
    CHECK(shmctl(0, SHM_INFO, &ds) >= 0);
    struct sembuf up = {0, 1, 0};
    CHECK_ERRNO(semop(sem, &up, 1), EACCES);  // others may read, not alter
    CHECK_EQ(semctl(sem, 0, GETVAL), 0);
    CHECK_ERRNO(semctl(sem, 0, IPC_RMID), EPERM);
    struct msgbuf64 m = {.mtype = 1};
    CHECK_ERRNO(msgsnd(msg, &m, 1, IPC_NOWAIT), EACCES);
    CHECK_ERRNO(msgctl(msg, IPC_RMID, NULL), EPERM);
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  struct shmid_ds ds = shm_stat(shm);
  ds.shm_perm.uid = 1000;  // give it away: the new owner may remove it
  CHECK_OK(shmctl(shm, IPC_SET, &ds));
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    CHECK_OK(setuid(1000));
    CHECK(shmat(shm, NULL, SHM_RDONLY) != (void *)-1);  // owner bits now: rw-
    CHECK_OK(shmctl(shm, IPC_RMID, NULL));
    _exit(0);
  }
  CHECK_EXIT(pid, 0);
  CHECK_ERRNO(shmctl(shm, IPC_STAT, &ds), EINVAL);
  CHECK_OK(semctl(sem, 0, IPC_RMID));
  CHECK_OK(msgctl(msg, IPC_RMID, NULL));
}

// --- POSIX message queues ---

TEST(mq_priorities) {
  char name[64];
  snprintf(name, sizeof(name), "/conf_sysv_ipc.%d", getpid());
  mq_unlink(name);
  struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 64};
  mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
  CHECK(q != (mqd_t)-1);
  CHECK_ERRNO(mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr), EEXIST);
  CHECK_OK(mq_send(q, "low", 4, 1));
  CHECK_OK(mq_send(q, "high", 5, 9));
  CHECK_OK(mq_send(q, "mid", 4, 5));
  CHECK_OK(mq_send(q, "mid2", 5, 5));
  struct mq_attr got;
  CHECK_OK(mq_getattr(q, &got));
  CHECK(got.mq_maxmsg == 4 && got.mq_msgsize == 64 && got.mq_curmsgs == 4 && got.mq_flags == 0);
  struct timespec soon;
  clock_gettime(CLOCK_REALTIME, &soon);
  soon.tv_nsec += 20 * 1000 * 1000;
  if (soon.tv_nsec >= 1000000000L) soon.tv_sec++, soon.tv_nsec -= 1000000000L;
  CHECK_ERRNO(mq_timedsend(q, "x", 1, 0, &soon), ETIMEDOUT);
  struct pollfd pfd = {q, POLLIN | POLLOUT, 0};
  CHECK_EQ(poll(&pfd, 1, 0), 1);
  CHECK_EQ(pfd.revents, POLLIN);
  char buf[64];
  unsigned prio;
  CHECK_ERRNO(mq_receive(q, buf, 63, &prio), EMSGSIZE);
  CHECK_ERRNO(mq_send(q, buf, 65, 0), EMSGSIZE);
  const char *want[] = {"high", "mid", "mid2", "low"};
  unsigned want_prio[] = {9, 5, 5, 1};
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(mq_receive(q, buf, sizeof(buf), &prio), (long)strlen(want[i]) + 1);
    CHECK_EQ(strcmp(buf, want[i]), 0);
    CHECK_EQ(prio, want_prio[i]);
  }
  clock_gettime(CLOCK_REALTIME, &soon);
  soon.tv_nsec += 20 * 1000 * 1000;
  if (soon.tv_nsec >= 1000000000L) soon.tv_sec++, soon.tv_nsec -= 1000000000L;
  CHECK_ERRNO(mq_timedreceive(q, buf, sizeof(buf), &prio, &soon), ETIMEDOUT);
  struct mq_attr nb = {.mq_flags = O_NONBLOCK};
  CHECK_OK(mq_setattr(q, &nb, &got));
  CHECK_EQ(got.mq_flags, 0);
  CHECK_ERRNO(mq_receive(q, buf, sizeof(buf), &prio), EAGAIN);
  nb.mq_flags = 0;
  CHECK_OK(mq_setattr(q, &nb, NULL));
  CHECK_ERRNO(mq_send(q, "x", 1, 40000), EINVAL);
  // A sleeping receiver in another process gets the message.
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    mqd_t c = mq_open(name, O_RDONLY);
    if (c == (mqd_t)-1) _exit(2);
    char b[64];
    if (mq_receive(c, b, sizeof(b), NULL) != 6 || strcmp(b, "hello") != 0) _exit(3);
    _exit(0);
  }
  conf_sleep_ms(20);
  CHECK_OK(mq_send(q, "hello", 6, 0));
  CHECK_EXIT(pid, 0);
  mqd_t ro = mq_open(name, O_RDONLY);
  CHECK(ro != (mqd_t)-1);
  CHECK_ERRNO(mq_send(ro, "x", 1, 0), EBADF);
  CHECK_OK(mq_close(ro));
  CHECK_OK(mq_unlink(name));
  CHECK_ERRNO(mq_unlink(name), ENOENT);
  CHECK_ERRNO(mq_open(name, O_RDONLY), ENOENT);
  CHECK_OK(mq_send(q, "after", 6, 0));  // the open queue lives on
  CHECK_EQ(mq_receive(q, buf, sizeof(buf), NULL), 6);
  CHECK_OK(mq_close(q));
  attr.mq_maxmsg = 0;
  CHECK_ERRNO(mq_open(name, O_RDWR | O_CREAT, 0600, &attr), EINVAL);
}

static volatile sig_atomic_t g_notified;
static void on_notify(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)uc;
  if (si->si_code == SI_MESGQ && si->si_value.sival_int == 77) g_notified = 1;
}

TEST(mq_notify_signal) {
  char name[64];
  snprintf(name, sizeof(name), "/conf_sysv_ipc_n.%d", getpid());
  mq_unlink(name);
  mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
  CHECK(q != (mqd_t)-1);
  struct mq_attr got;
  CHECK_OK(mq_getattr(q, &got));
  CHECK_EQ(got.mq_maxmsg, 10);
  CHECK_EQ(got.mq_msgsize, 8192);
  struct sigaction sa = {.sa_sigaction = on_notify, .sa_flags = SA_SIGINFO};
  CHECK_OK(sigaction(SIGUSR2, &sa, NULL));
  struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR2};
  ev.sigev_value.sival_int = 77;
  CHECK_OK(mq_notify(q, &ev));
  CHECK_ERRNO(mq_notify(q, &ev), EBUSY);
  CHECK_OK(mq_send(q, "ping", 5, 0));
  for (int i = 0; !g_notified; i++) {
    CHECK(i < 2000);
    usleep(500);
  }
  // The registration is used up: the next message sends no signal.
  CHECK_OK(mq_notify(q, NULL));
  CHECK_OK(mq_close(q));
  CHECK_OK(mq_unlink(name));
  signal(SIGUSR2, SIG_DFL);
}

int main(int argc, char **argv) {
  conf_init(argc, argv);
  if (argc == 3 && strcmp(argv[1], "shm-child") == 0) return shm_child(argv[2]);
  if (argc == 3 && strcmp(argv[1], "shm-nattch") == 0) return shm_nattch_child(argv[2]);
  RUN(shm_private_fork);
  RUN(shm_key_unrelated);
  RUN(shm_rmid_while_attached);
  RUN(shm_rdonly_segv);
  RUN(shm_addresses);
  RUN(shm_ctl);
  RUN(sem_values);
  RUN(sem_blocking_undo);
  RUN(sem_eidrm_timeout_eintr);
  RUN(msg_types);
  RUN(msg_blocking);
  RUN(shm_futex_across_processes);
  RUN(ipc_permissions);
  RUN(mq_priorities);
  RUN(mq_notify_signal);
  PASS("sysv_ipc");
}
