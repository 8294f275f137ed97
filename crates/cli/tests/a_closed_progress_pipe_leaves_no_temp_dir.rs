//! The reader of flashlab's progress (stderr) goes away mid-run: flashlab ends as a Unix tool
//! does on a closed pipe (status 141, 128 + SIGPIPE), and the temporary directory it made for
//! its device files is gone with it. (SIGPIPE's default action killed the process on the
//! spot and left an empty `.tmpXXXXXX` in the working directory.)

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_progress_pipe_leaves_no_temporary_directory() {
    let cwd = tempfile::tempdir().expect("a working directory");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["reproduce", "as-btree", "--scale", "quick"])
        .current_dir(cwd.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flashlab");
    let mut progress = child.stderr.take().expect("stderr piped");
    let mut first = [0u8; 1];
    progress.read_exact(&mut first).expect("a progress line");
    drop(progress); // the reader goes away
    let status = child.wait().expect("flashlab ends");
    let left: Vec<_> = std::fs::read_dir(cwd.path())
        .expect("read the working directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert_eq!(status.code(), Some(141), "{status:?}");
}
