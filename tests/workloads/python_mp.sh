# Workload: CPython's multiprocessing -- a Pool of 4 workers (fork, pipes, POSIX semaphores in
# /dev/shm), a Queue between processes, multiprocessing.shared_memory (shm_open + MAP_SHARED
# seen by a child), a shared Value under a Lock, and System V IPC through ctypes (shmget/shmat
# across fork, semop, msgsnd/msgrcv). Only deterministic values are printed.
set -eu
cat >/tmp/wl_mp.$$.py <<'PYEOF'
import ctypes
import multiprocessing as m
from multiprocessing import shared_memory


def square(x):
    return x * x


def producer(q, n):
    for i in range(n):
        q.put(("item", i, "x" * i))
    q.put(None)


def add_to(v, lock, n):
    for _ in range(n):
        with lock:
            v.value += 1


def fill(name):
    shm = shared_memory.SharedMemory(name=name)
    shm.buf[:5] = b"child"
    shm.close()


def sysv(libc):
    IPC_PRIVATE, IPC_RMID = 0, 0
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    shmid = libc.shmget(IPC_PRIVATE, 4096, 0o600)
    addr = libc.shmat(shmid, None, 0)
    buf = (ctypes.c_char * 4096).from_address(addr)
    p = m.get_context("fork").Process(target=lambda: buf.__setitem__(slice(0, 4), b"fork"))
    p.start()
    p.join()
    print("sysv shm", buf[:4], p.exitcode)
    libc.shmdt(ctypes.c_void_p(addr))
    print("sysv shm rmid", libc.shmctl(shmid, IPC_RMID, None))

    class sembuf(ctypes.Structure):
        _fields_ = [("num", ctypes.c_ushort), ("op", ctypes.c_short), ("flg", ctypes.c_short)]
    semid = libc.semget(IPC_PRIVATE, 1, 0o600)
    ops = sembuf(0, 3, 0)
    print("sysv sem", libc.semop(semid, ctypes.byref(ops), 1), libc.semctl(semid, 0, 12))
    print("sysv sem rmid", libc.semctl(semid, 0, IPC_RMID))

    class msgbuf(ctypes.Structure):
        _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 64)]
    msqid = libc.msgget(IPC_PRIVATE, 0o600)
    out = msgbuf(7, b"hello queue")
    libc.msgsnd(msqid, ctypes.byref(out), 12, 0)
    back = msgbuf()
    n = libc.msgrcv(msqid, ctypes.byref(back), 64, 0, 0)
    print("sysv msg", n, back.mtype, back.mtext)
    print("sysv msg rmid", libc.msgctl(msqid, IPC_RMID, None))


if __name__ == "__main__":
    print("pool", m.Pool(4).map(abs, [-1, -2]))
    with m.Pool(4) as pool:
        print("pool squares", sum(pool.map(square, range(1000))))
    q = m.Queue()
    p = m.Process(target=producer, args=(q, 50))
    p.start()
    items = []
    while (item := q.get()) is not None:
        items.append(item)
    p.join()
    print("queue", len(items), items[3], p.exitcode)
    shm = shared_memory.SharedMemory(create=True, size=4096)
    p = m.Process(target=fill, args=(shm.name,))
    p.start()
    p.join()
    print("shared_memory", bytes(shm.buf[:5]), p.exitcode)
    shm.close()
    shm.unlink()
    v, lock = m.Value("i", 0), m.Lock()
    ps = [m.Process(target=add_to, args=(v, lock, 200)) for _ in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    print("value", v.value)
    sysv(ctypes.CDLL(None, use_errno=True))
PYEOF
trap 'rm -f /tmp/wl_mp.$$.py' EXIT
/usr/bin/python3 /tmp/wl_mp.$$.py
