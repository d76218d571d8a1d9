// The stub: the host process that holds a guest address space. It never runs guest syscalls
// (PTRACE_SYSEMU skips them); it only runs these few instructions, at fixed addresses the
// Sentry knows (platform/ptrace/stub_layout.h), to stop itself and to execute the host
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

        .org    0x300
ignore_action:
        .quad   1, 0, 0, 0              // SIG_IGN, no flags, no restorer, empty mask
        .section .note.GNU-stack,"",@progbits
