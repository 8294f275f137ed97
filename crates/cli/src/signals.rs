//! Signals, as a Unix tool handles them:
//! - SIGPIPE ends the process quietly, so `flashlab presets | head -1` stops when the reader
//!   closes the pipe (Rust ignores SIGPIPE, and `println!` would then panic on EPIPE). It is
//!   not left at its default action, which kills the process on the spot: a run whose
//!   progress pipe closes would leave its temporary device directory behind. Its handler
//!   (async-signal-safe: an atomic store and `kill`) notes it and raises SIGTERM, which the
//!   waiting thread below takes: it removes the temporary files and exits with 141.
//! - SIGINT and SIGTERM are blocked in every thread and taken by one waiting thread, which
//!   removes the temporary device files the run created (`lab::devices::temp_dir`) and exits
//!   with 130 (SIGINT) or 143 (SIGTERM). A child process inherits that mask across exec, so
//!   every child flashlab starts unblocks them first ([`unblock_in_child`]), or it would
//!   ignore Ctrl-C and `kill`.

pub fn install() {
    // SAFETY: called first in `main`, before any other thread exists; the signal functions
    // get valid pointers to a local set.
    unsafe {
        let on_pipe: extern "C" fn(libc::c_int) = on_sigpipe;
        libc::signal(libc::SIGPIPE, on_pipe as libc::sighandler_t);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return; // keep the default actions (no cleanup) rather than fail the run
        }
        std::thread::spawn(move || wait_and_clean(set));
    }
}

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGPIPE handler: the exit is then for a closed pipe, and stderr may be gone.
static PIPE_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set once the waiting thread cleans up: a closed pipe then must not wait for it again.
static CLEANING: AtomicBool = AtomicBool::new(false);

/// The writer that met the closed pipe waits here (it must not go on and panic on EPIPE)
/// while the waiting thread cleans up and exits.
extern "C" fn on_sigpipe(_: libc::c_int) {
    PIPE_CLOSED.store(true, Ordering::SeqCst);
    if CLEANING.load(Ordering::SeqCst) {
        return; // the cleaning thread's own message: its write fails and is ignored
    }
    // SAFETY: kill, getpid and pause are async-signal-safe.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGTERM);
        loop {
            libc::pause();
        }
    }
}

fn wait_and_clean(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` and `sig` are valid for the call.
    if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
        return;
    }
    CLEANING.store(true, Ordering::SeqCst);
    let pipe = PIPE_CLOSED.load(Ordering::SeqCst);
    let clusters = lab::capture::cluster::stop_all();
    let removed = lab::devices::remove_temp_dirs();
    if pipe {
        std::process::exit(128 + libc::SIGPIPE); // as the default action's status reads
    }
    // Written, not `eprintln!`: a closed stderr must not panic this thread before the exit.
    use std::io::Write;
    let mut err = std::io::stderr();
    if clusters > 0 {
        let _ = writeln!(
            err,
            "\ninterrupted: stopped and removed {clusters} PostgreSQL cluster(s)"
        );
    }
    if removed > 0 {
        let s = if removed == 1 { "y" } else { "ies" };
        let _ = writeln!(
            err,
            "\ninterrupted: removed {removed} temporary device director{s}"
        );
    }
    std::process::exit(128 + sig);
}

pub use lab::child::unblock_in_child;
