//! Child processes flashlab starts (PostgreSQL, bpftrace, psql, the Python sweep): the command
//! line blocks SIGINT and SIGTERM in every thread (one thread waits for them) and a spawned
//! process inherits that mask, so every child unblocks them before exec, here.

use std::process::Command;

/// In a forked child before exec (`CommandExt::pre_exec`): SIGINT and SIGTERM deliverable
/// again. Async-signal-safe (only sigset calls and sigprocmask).
pub fn unblock_in_child() -> std::io::Result<()> {
    // SAFETY: the set is a local, initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Let `c`'s process take SIGINT and SIGTERM again ([`unblock_in_child`] before its exec).
pub fn unblock_signals(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls on a local set.
    unsafe {
        c.pre_exec(unblock_in_child);
    }
}
