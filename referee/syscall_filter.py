"""What the sandbox's system-call filter allows and denies: data only, built into a seccomp
program by :func:`referee.sandbox.seccomp_program`.

The reference is Docker's default seccomp profile for a container given no added
capability — :data:`PROFILE` names the version followed. That profile is an *allow list*
(anything it does not name fails), and so is ours: a call the kernel gains later is
refused until someone has looked at it, where a deny list would let it through. Ours is
written by purpose, not in the profile's order, and differs from it in three ways, each
stricter or safer for the bot:

- a call that is neither allowed nor denied by name fails with ``ENOSYS`` ("no such
  call"), not ``EPERM``: a newer C library tries a new call first (``fchmodat2``,
  ``cachestat``…) and falls back to an older one only on ``ENOSYS``; the calls denied on
  purpose (:data:`DENIED`) still fail with ``EPERM``, as in Docker's profile;
- ``sched_setaffinity`` is denied (``EPERM``): a bot may not undo its CPU pinning;
- ``clone`` asking for any new namespace fails with ``EPERM`` rather than the default, so
  that tools report "Operation not permitted" as for ``unshare``.
"""

from __future__ import annotations

import errno

PROFILE = (
    "Docker's default seccomp profile, moby/profiles seccomp/default.json at tag"
    " seccomp/v0.2.3 (commit 836ae4d37ef2ec995c77c99fc55f5b5f3af3a897)"
)
"""The profile this filter follows (see the module's notes for where it differs)."""

ALLOWED: dict[str, tuple[str, ...]] = {
    "files": (
        "access", "chdir", "chmod", "chown", "chown32", "close", "close_range",
        "copy_file_range", "creat", "dup", "dup2", "dup3", "faccessat", "faccessat2",
        "fadvise64", "fadvise64_64", "fallocate", "fchdir", "fchmod", "fchmodat",
        "fchmodat2", "fchown", "fchown32", "fchownat", "fdatasync",
        "fstat", "fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync",
        "ftruncate", "ftruncate64", "futimesat", "getcwd", "getdents", "getdents64",
        "lchown", "lchown32", "link", "linkat", "_llseek", "lseek", "lstat", "lstat64",
        "mkdir", "mkdirat", "mknod", "mknodat", "name_to_handle_at", "newfstatat", "open",
        "openat", "openat2", "pread64", "preadv", "preadv2", "pwrite64", "pwritev",
        "pwritev2", "read", "readahead", "readlink", "readlinkat", "readv", "rename",
        "renameat", "renameat2", "rmdir", "sendfile", "sendfile64", "splice", "stat",
        "stat64", "statfs", "statfs64", "statx", "symlink", "symlinkat", "sync",
        "sync_file_range", "syncfs", "tee", "truncate", "truncate64", "umask", "unlink",
        "unlinkat", "utime", "utimensat", "utimensat_time64", "utimes", "vmsplice",
        "write", "writev", "cachestat", "listmount", "statmount",
    ),
    "extended attributes": (
        "fgetxattr", "flistxattr", "fremovexattr", "fsetxattr", "getxattr", "getxattrat",
        "lgetxattr", "listxattr", "listxattrat", "llistxattr", "lremovexattr",
        "lsetxattr", "removexattr", "removexattrat", "setxattr", "setxattrat",
    ),
    "waiting and events": (
        "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait",
        "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2",
        "_newselect", "pause", "poll", "ppoll", "ppoll_time64",
        "pselect6", "pselect6_time64", "select", "signalfd", "signalfd4",
        "io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64",
        "io_setup", "io_submit", "ioctl", "pipe", "pipe2",
    ),
    "memory": (
        "brk", "madvise", "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret",
        "mincore", "mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect", "mremap",
        "mseal", "msync", "munlock", "munlockall", "munmap", "pkey_alloc", "pkey_free",
        "pkey_mprotect", "remap_file_pages",
    ),
    "processes and threads": (
        "execve", "execveat", "exit", "exit_group", "fork", "vfork", "wait4", "waitid",
        "waitpid", "kill", "tkill", "tgkill", "pidfd_open", "pidfd_send_signal",
        "process_mrelease", "getpid", "getppid", "gettid", "getpgid", "getpgrp",
        "setpgid", "getsid", "setsid", "set_tid_address", "get_robust_list",
        "set_robust_list", "rseq", "restart_syscall", "prctl", "seccomp",
        "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
        "getcpu", "getpriority", "setpriority", "ioprio_get", "ioprio_set",
        "sched_getaffinity", "sched_getattr", "sched_getparam", "sched_get_priority_max",
        "sched_get_priority_min", "sched_getscheduler", "sched_rr_get_interval",
        "sched_rr_get_interval_time64", "sched_setattr", "sched_setparam",
        "sched_setscheduler", "sched_yield", "getrlimit", "ugetrlimit", "setrlimit",
        "prlimit64", "getrusage", "times", "sysinfo", "uname", "capget", "capset",
        "get_thread_area", "set_thread_area", "uretprobe",
        # Tracing its own children: the kernel (4.8 and later) applies the filter after
        # the tracer's changes, and the PID namespace holds nothing else to trace.
        "ptrace", "process_vm_readv", "process_vm_writev",
    ),
    "futexes": (
        "futex", "futex_requeue", "futex_time64", "futex_wait", "futex_waitv", "futex_wake",
    ),
    "signals": (
        "alarm", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
        "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64",
        "rt_tgsigqueueinfo", "sigaltstack", "sigprocmask", "sigreturn",
    ),
    "time (reading it, sleeping, timers)": (
        "adjtimex", "clock_adjtime", "clock_adjtime64", "clock_getres",
        "clock_getres_time64", "clock_gettime", "clock_gettime64", "clock_nanosleep",
        "clock_nanosleep_time64", "gettimeofday", "nanosleep", "time", "getitimer",
        "setitimer", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
        "timer_gettime64", "timer_settime", "timer_settime64", "timerfd_create",
        "timerfd_gettime", "timerfd_gettime64", "timerfd_settime", "timerfd_settime64",
    ),
    "users and groups (the kernel lets a bot without capabilities only drop rights)": (
        "getegid", "getegid32", "geteuid", "geteuid32", "getgid", "getgid32", "getgroups",
        "getgroups32", "getresgid", "getresgid32", "getresuid", "getresuid32", "getuid",
        "getuid32", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
        "setgid32", "setgroups", "setgroups32", "setregid", "setregid32", "setresgid",
        "setresgid32", "setresuid", "setresuid32", "setreuid", "setreuid32", "setuid",
        "setuid32",
    ),
    "sockets (socket itself: see SOCKET_FAMILIES_DENIED)": (
        "accept", "accept4", "bind", "connect", "getpeername", "getsockname",
        "getsockopt", "listen", "recv", "recvfrom", "recvmmsg", "recvmmsg_time64",
        "recvmsg", "send", "sendmmsg", "sendmsg", "sendto", "setsockopt", "shutdown",
        "socketcall", "socketpair",
    ),
    "System V and POSIX IPC (in the sandbox's own IPC namespace)": (
        "ipc", "msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget", "semop",
        "semtimedop", "semtimedop_time64", "shmat", "shmctl", "shmdt", "shmget",
        "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
        "mq_timedreceive_time64", "mq_timedsend", "mq_timedsend_time64", "mq_unlink",
    ),
    "randomness": ("getrandom",),
    "one machine's own (each known only where it exists)": (
        "arch_prctl", "modify_ldt",
        "arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint",
        "cacheflush", "set_tls", "swapcontext", "riscv_flush_icache", "riscv_hwprobe",
        "s390_pci_mmio_read", "s390_pci_mmio_write", "s390_runtime_instr",
    ),
}  # fmt: skip
"""Allowed outright, by purpose (the groups are for reading; the filter takes them all)."""

DENIED: dict[str, tuple[str, ...]] = {
    "kernel keys": ("add_key", "keyctl", "request_key"),
    "BPF and performance counters": ("bpf", "perf_event_open"),
    "userfaultfd": ("userfaultfd",),
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "mounts": (
        "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
        "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    ),
    "namespaces": ("setns", "unshare"),
    "kernel modules": (
        "init_module", "finit_module", "delete_module", "create_module", "query_module",
        "get_kernel_syms",
    ),
    "kexec and reboot": ("kexec_load", "kexec_file_load", "reboot"),
    "setting the clocks": ("settimeofday", "stime", "clock_settime", "clock_settime64"),
    "the machine's administration": (
        "acct", "swapon", "swapoff", "quotactl", "quotactl_fd", "sethostname",
        "setdomainname", "syslog", "vhangup", "iopl", "ioperm", "lookup_dcookie",
        "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "vm86", "vm86old",
        "fanotify_init",
    ),
    "other processes' files and memory": ("kcmp", "pidfd_getfd", "process_madvise"),
    "files by handle": ("open_by_handle_at",),
    "memory placement (NUMA)": (
        "mbind", "get_mempolicy", "set_mempolicy", "set_mempolicy_home_node",
        "migrate_pages", "move_pages",
    ),
    "CPU affinity": ("sched_setaffinity",),
}  # fmt: skip
"""Denied by name with :data:`DENIED_ERRNO`, by purpose: Docker's profile gives these only
to a container with added capabilities (or to none), and so are its reasons ours."""

DENIED_ERRNO = errno.EPERM
"""What a call of :data:`DENIED` returns (as in Docker's profile)."""

DEFAULT_ERRNO = errno.ENOSYS
"""What any other call not allowed returns (see the module's notes)."""

CLONE_NAMESPACES = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""``clone`` is allowed without these flags, and fails with ``EPERM`` with any of them:
in a user namespace of its own a bot would be root there (free to mount a tmpfs of any
size, outside every limit), and every other namespace needs that or a capability."""

CLONE3_ERRNO = errno.ENOSYS
"""``clone3`` passes its flags in memory, which a filter cannot read: it fails with
``ENOSYS``, upon which C libraries fall back to ``clone``."""

FILE_LOCKS_ERRNO = errno.ENOLCK
"""What taking or testing a file lock returns (``flock``; ``fcntl``'s lock commands): "no
locks available". Sandboxes see the same host files (``/usr``, ``/etc``, the bots' own
folders, read-only), and a lock on one of them is seen by every other process: two bots
playing at once could signal to each other through it, one bit per file. Docker's profile
allows locks (a container's files are its own); ours are not, so no bot gets them."""

FCNTL_ALLOWED = (
    0, 1, 2, 3, 4,  # F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL
    8, 9, 10, 11, 15, 16,  # F_SETOWN, F_GETOWN, F_SETSIG, F_GETSIG, F_SETOWN_EX, F_GETOWN_EX
    1025, 1027, 1028,  # F_GETLEASE, F_DUPFD_QUERY, F_CREATED_QUERY
    1030, 1031, 1032, 1033, 1034,  # F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, seals
    1035, 1036, 1037, 1038,  # F_GET_RW_HINT, F_SET_RW_HINT, F_GET_FILE_RW_HINT, F_SET_…
)  # fmt: skip
"""``fcntl``'s commands a bot may use (its second argument); any other fails with
:data:`DEFAULT_ERRNO` but those below."""

FCNTL_LOCKS = (5, 6, 7, 12, 13, 14, 36, 37, 38)
"""``fcntl``'s lock commands (``F_GETLK``, ``F_SETLK``, ``F_SETLKW``, their ``64`` forms and
the open-file-description ``F_OFD_*`` ones): they fail with :data:`FILE_LOCKS_ERRNO`."""

FCNTL_WATCHES = (1024, 1026)
"""``F_SETLEASE`` and ``F_NOTIFY`` (dnotify) fail with :data:`DENIED_ERRNO`: a lease or a
directory watch on a shared file tells a bot what another does with it. ``inotify`` and
``fanotify_mark`` are not allowed at all (:data:`DEFAULT_ERRNO`) for the same reason: a
program that watches files falls back to looking at them when it gets ``ENOSYS``."""

SOCKET_FAMILIES_DENIED = {"AF_ALG": 38, "AF_VSOCK": 40}
"""``socket`` is allowed but for these address families (``EPERM``): the kernel's crypto
interface and sockets to the host of a virtual machine."""

PERSONALITIES_ALLOWED = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""``personality`` is allowed for Linux's own (``PER_LINUX``, ``PER_LINUX32``, with or
without ``UNAME26``) and for the query (``0xffffffff``); any other fails with
:data:`DEFAULT_ERRNO` (a filter cannot say "none of these" in one rule)."""
