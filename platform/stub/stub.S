// The stub: the host process that holds a guest address space. It never runs guest syscalls
// (PTRACE_SYSEMU skips them); it only runs these few instructions, at fixed addresses the
// Sentry knows (Layout in platform/platform.h), to stop itself and to execute the host
// syscalls the Sentry injects to change the address space.
        .text
        .globl _start
_start:
        // SIGCHLD ignored: the host reaps stub children (forked address spaces, thread stubs)
        // by itself, so none is left a zombie.
        mov     $13, %eax               // rt_sigaction(SIGCHLD, &ignore, NULL, 8)
        mov     $17, %edi
        lea     ignore_action(%rip), %rsi
        xor     %edx, %edx
        mov     $8, %r10d
        syscall
        mov     $157, %eax              // prctl(PR_SET_PDEATHSIG, SIGKILL): die with the Sentry
        mov     $1, %edi
        mov     $9, %esi
        syscall
        mov     $157, %eax              // prctl(PR_SET_NO_NEW_PRIVS, 1): lets a stub install
        mov     $38, %edi               // the seccomp platform's filter without privilege
        mov     $1, %esi
        xor     %edx, %edx
        xor     %r10d, %r10d
        xor     %r8d, %r8d
        syscall
        mov     $317, %eax              // seccomp(SET_MODE_FILTER, 0, &confine_prog): host
        mov     $1, %edi                // calls only from this page, from the first stop on
        xor     %esi, %esi
        lea     confine_prog(%rip), %rdx
        syscall
        test    %rax, %rax
        jz      stop_loop
        mov     $231, %eax              // exit_group(126): never run unconfined
        mov     $126, %edi
        syscall
stop_loop:
        // Wait here, stopped, until a Sentry thread attaches and takes over the registers.
        mov     $39, %eax               // getpid()
        syscall
        mov     %eax, %edi
        mov     $19, %esi               // kill(self, SIGSTOP)
        mov     $62, %eax
        syscall
        jmp     stop_loop

        .org    0x100
inject:
        // The Sentry points rip here with a host syscall in rax/rdi/...; int3 hands back.
        syscall
        int3

        .org    0x200
clone_entry:
        // clone() for a new guest thread or a forked address space. The parent traps back
        // to the Sentry; the child, which runs untraced, stops itself until it is attached.
        syscall
        test    %rax, %rax
        jz      stop_loop
        int3

        .org    0x280
batch_entry:
        // Runs the rsi host syscalls of the table at rdi, in order, and stops after the first
        // that fails. An entry is eight quadwords: the number, six arguments, and the slot
        // its result goes to. rax ends as the last result. The table is ordinary stub memory,
        // so only an address space that no guest code runs in yet gets a batch
        // (StubAddressSpace::BeginBatch).
        mov     %rdi, %r12
        mov     %rsi, %r13
1:      test    %r13, %r13
        jz      2f
        mov     (%r12), %rax
        mov     8(%r12), %rdi
        mov     16(%r12), %rsi
        mov     24(%r12), %rdx
        mov     32(%r12), %r10
        mov     40(%r12), %r8
        mov     48(%r12), %r9
        syscall
        mov     %rax, 56(%r12)
        cmp     $-4095, %rax
        jae     2f
        add     $64, %r12
        dec     %r13
        jmp     1b
2:      int3

        .org    0x300
ignore_action:
        .quad   1, 0, 0, 0              // SIG_IGN, no flags, no restorer, empty mask

        // The seccomp platform's filter (Layout::kStubFilter), a struct sock_fprog: every
        // x86-64 syscall goes to the Sentry as a user notification; any other ABI kills.
        .org    0x380
filter_prog:
        .short  4, 0, 0, 0              // len, padding
        .quad   filter_insns
        .org    0x400
filter_insns:
        .short  0x20                    // ld [4]  (seccomp_data.arch)
        .byte   0, 0
        .long   4
        .short  0x15                    // jeq AUDIT_ARCH_X86_64, +0, +1
        .byte   0, 1
        .long   0xc000003e
        .short  0x06                    // ret SECCOMP_RET_USER_NOTIF
        .byte   0, 0
        .long   0x7fc00000
        .short  0x06                    // ret SECCOMP_RET_KILL_PROCESS
        .byte   0, 0
        .long   0x80000000

        // Every stub's own filter (both platforms), installed at _start and inherited by
        // every stub cloned from it: a host syscall made from this code page (the Sentry's
        // injections, the stop loop) runs; any other is a guest's, which the platform catches
        // before seccomp sees it (PTRACE_SYSEMU skips the filters) or through the guest
        // filter above (a USER_NOTIF from a later filter wins, as the lower action with the
        // listener attached). Should a guest call ever get here untraced, USER_NOTIF without
        // a listener fails it with ENOSYS: it never reaches the host kernel. Any other ABI
        // kills the stub.
        .org    0x480
confine_prog:
        .short  9, 0, 0, 0              // len, padding
        .quad   confine_insns
        .org    0x500
confine_insns:
        .short  0x20                    // ld [4]  (seccomp_data.arch)
        .byte   0, 0
        .long   4
        .short  0x15                    // jeq AUDIT_ARCH_X86_64, +0, +6 (kill)
        .byte   0, 6
        .long   0xc000003e
        .short  0x20                    // ld [12] (instruction_pointer, high half)
        .byte   0, 0
        .long   12
        .short  0x15                    // jeq kStubBase >> 32, +0, +3 (notif)
        .byte   0, 3
        .long   0x7fc0
        .short  0x20                    // ld [8]  (instruction_pointer, low half)
        .byte   0, 0
        .long   8
        .short  0x35                    // jge 0x1000 (past the code page), +1 (notif), +0
        .byte   1, 0
        .long   0x1000
        .short  0x06                    // ret SECCOMP_RET_ALLOW
        .byte   0, 0
        .long   0x7fff0000
        .short  0x06                    // ret SECCOMP_RET_USER_NOTIF
        .byte   0, 0
        .long   0x7fc00000
        .short  0x06                    // ret SECCOMP_RET_KILL_PROCESS
        .byte   0, 0
        .long   0x80000000

        .org    0x600
fork_entry:
        // The stub factory's fork (stub_factory.cc): clone() as at clone_entry, with r9 the
        // fd at which the factory holds the new stub's channel (-1: none). The child makes it
        // its fd 0 (kStubChannelFd), replacing the factory's channel there, or closes fd 0,
        // and stops until it is attached; it exits if that fails. The parent closes the fd
        // and traps back with clone's result.
        syscall
        test    %rax, %rax
        jz      2f
        mov     %rax, %r13
        test    %r9, %r9
        js      1f
        mov     $3, %eax                // close(r9)
        mov     %r9, %rdi
        syscall
1:      mov     %r13, %rax
        int3
2:      test    %r9, %r9
        js      3f
        mov     $33, %eax               // dup2(r9, 0)
        mov     %r9, %rdi
        xor     %esi, %esi
        syscall
        test    %rax, %rax
        jnz     4f
        mov     $3, %eax                // close(r9)
        mov     %r9, %rdi
        syscall
        jmp     stop_loop
3:      mov     $3, %eax                // close(0)
        xor     %edi, %edi
        syscall
        test    %rax, %rax
        jz      stop_loop
4:      mov     $231, %eax              // exit_group(126)
        mov     $126, %edi
        syscall

        .org    0x680
guest_clone_entry:
        // clone() for a guest stub of the seccomp platform (MakeGuestStub), with r9 the pid of
        // the injector that clones it. The child asks to die with its parent and checks that
        // its parent is still that injector (it may have died before the prctl), exiting if
        // not, then stops until it is attached. The parent traps back with clone's result.
        syscall
        test    %rax, %rax
        jz      1f
        int3
1:      mov     $157, %eax              // prctl(PR_SET_PDEATHSIG, SIGKILL)
        mov     $1, %edi
        mov     $9, %esi
        syscall
        test    %rax, %rax
        jnz     2f
        mov     $110, %eax              // getppid()
        syscall
        cmp     %r9, %rax
        je      stop_loop
2:      mov     $231, %eax              // exit_group(126)
        mov     $126, %edi
        syscall

        .org    0x700
close_inject:
        // An injected syscall as at inject, after close(r12): an fd the Sentry no longer needs
        // in the stub's fd table (StubInjector::DeferClose) goes with the next injection
        // instead of one of its own. close's result is not looked at; r13 and r14 keep rax
        // and rdi across it.
        mov     %rax, %r13
        mov     %rdi, %r14
        mov     $3, %eax
        mov     %r12, %rdi
        syscall
        mov     %r13, %rax
        mov     %r14, %rdi
        syscall
        int3

        // Scratch memory for injected syscalls that take pointers (Layout::kStubScratch):
        // the ptrace platform's recvmsg of a lent fd writes its msghdr and control data here.
        // It lies in the reserved stub range, so no guest mapping replaces it.
        .bss
        .balign 4096
scratch:
        .space  4096

        .section .note.GNU-stack,"",@progbits
