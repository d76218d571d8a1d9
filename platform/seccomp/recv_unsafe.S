// SeccompRecv (seccomp_wait.h): SECCOMP_IOCTL_NOTIF_RECV that a kick can never miss.
//
// long SeccompRecv(int listener, unsigned long request, void* notif, const int* kicked)
//   rdi = listener, rsi = request, rdx = notif, rcx = kicked
//
// A kicker sets *kicked, then signals the thread. If the signal lands before *kicked is read,
// the read sees the flag; if it lands after the read and up to the syscall instruction, the
// signal handler moves rip to the "kicked" exit (SeccompRecvWindow*); if it lands during the
// syscall, the ioctl returns -EINTR (or, with SA_RESTART, is rewound onto the syscall
// instruction, which is inside the window). Returns the raw result, -errno on failure.
        .text
        .globl  SeccompRecv
        .type   SeccompRecv, @function
SeccompRecv:
        movl    (%rcx), %eax
        // From here to the syscall instruction, the flag may have been set after it was read:
        // a kick landing in this window is redirected to the "kicked" exit.
        .globl  SeccompRecvWindowStart
SeccompRecvWindowStart:
        testl   %eax, %eax
        jnz     SeccompRecvKicked
        movl    $16, %eax               // SYS_ioctl
        syscall
        .globl  SeccompRecvWindowEnd    // the first instruction after the syscall
SeccompRecvWindowEnd:
        ret
        .globl  SeccompRecvKicked
SeccompRecvKicked:
        movq    $-4, %rax               // -EINTR
        ret
        .size   SeccompRecv, .-SeccompRecv
        .section .note.GNU-stack,"",@progbits
