//! Signals, as a Unix tool handles them:
//! - SIGPIPE keeps its default action, so `flashlab presets | head -1` ends quietly when the
//!   reader closes the pipe (Rust ignores SIGPIPE, and `println!` would then panic on EPIPE).
//! - SIGINT and SIGTERM are blocked in every thread and taken by one waiting thread, which
//!   removes the temporary device files the run created (`lab::devices::temp_dir`) and exits
//!   with 130 (SIGINT) or 143 (SIGTERM). A child process inherits that mask across exec, so
//!   every child flashlab starts unblocks them first ([`unblock_in_child`]), or it would
//!   ignore Ctrl-C and `kill`.

pub fn install() {
    // SAFETY: called first in `main`, before any other thread exists; the signal functions
    // get valid pointers to a local set.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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

fn wait_and_clean(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` and `sig` are valid for the call.
    if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
        return;
    }
    let clusters = lab::capture::cluster::stop_all();
    if clusters > 0 {
        eprintln!("\ninterrupted: stopped and removed {clusters} PostgreSQL cluster(s)");
    }
    let removed = lab::devices::remove_temp_dirs();
    if removed > 0 {
        eprintln!(
            "\ninterrupted: removed {removed} temporary device director{}",
            if removed == 1 { "y" } else { "ies" }
        );
    }
    std::process::exit(128 + sig);
}

pub use lab::child::unblock_in_child;
