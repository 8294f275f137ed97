//! Numbered line reading shared by the text trace and log readers ([`crate::trace::Records`],
//! [`crate::ycsb::LogReader`], [`crate::cache_trace::PageRefs`]): one line at a time, counting
//! lines from 1, stopping for good after the first error.
//!
//! A line that lies whole in the stream's buffer is handed out in place (found with `memchr`,
//! consumed on the next call): no copy and no allocation per line. Only a line that straddles
//! the buffer's end, or the last line, is gathered into a reused buffer.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The longest line a reader takes, in bytes (with its newline): a longer one (a file with
/// no newlines, e.g. `/dev/zero` or a binary file) is an error, never unbounded memory.
pub const LINE_BYTES_MAX: usize = 1 << 20;

/// Why [`Lines::next_parsed`] stopped: the reader failed, or a line did not parse (the line
/// is [`Lines::line`]).
#[derive(Debug)]
pub enum LineError {
    Io(std::io::Error),
    Parse(String),
}

/// A numbered line reader over an open stream; `path` names the stream in errors.
pub struct Lines {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    line: u64,
    buf: Vec<u8>,
    /// Bytes of the stream's buffer the last line occupies, consumed at the next read.
    pending: usize,
    stopped: bool,
}

impl Lines {
    pub fn new(path: &Path, input: Box<dyn BufRead + Send>) -> Lines {
        Lines {
            path: path.to_path_buf(),
            input,
            line: 0,
            buf: Vec::with_capacity(256),
            pending: 0,
            stopped: false,
        }
    }

    /// The stream's name, for errors.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of the last line read (1-based; 0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The underlying stream (binary formats read records from it directly).
    pub fn input(&mut self) -> &mut (dyn BufRead + Send) {
        self.input.consume(std::mem::take(&mut self.pending));
        &mut *self.input
    }

    /// Stop: every later read is the end.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The next line's bytes (with its newline); `None` at the end or once stopped. A read
    /// error stops the reader.
    pub fn next_line(&mut self) -> Option<Result<&[u8], std::io::Error>> {
        if self.stopped {
            return None;
        }
        self.input.consume(std::mem::take(&mut self.pending));
        match self.buffered_line() {
            Ok(Some(n)) => {
                self.line += 1;
                self.pending = n;
                // The same buffer again (nothing was consumed): no read happens.
                match self.input.fill_buf() {
                    Ok(b) if b.len() >= n => Some(Ok(&b[..n])),
                    _ => unreachable!("a BufRead's buffer shrank without a consume"),
                }
            }
            Ok(None) => self.gathered_line(),
            Err(e) => {
                self.stopped = true;
                Some(Err(e))
            }
        }
    }

    /// The length of the next line if it lies whole (newline included, within the cap) in
    /// the stream's buffer, else `None`.
    #[inline]
    fn buffered_line(&mut self) -> Result<Option<usize>, std::io::Error> {
        loop {
            match self.input.fill_buf() {
                Ok(b) => {
                    let n = memchr::memchr(b'\n', b).map(|i| i + 1);
                    return Ok(n.filter(|&n| n <= LINE_BYTES_MAX));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line gathered into `buf` (it straddles the stream's buffer, is the last, or
    /// is longer than the cap).
    #[cold]
    fn gathered_line(&mut self) -> Option<Result<&[u8], std::io::Error>> {
        self.buf.clear();
        let cap = LINE_BYTES_MAX as u64 + 1;
        match (&mut self.input).take(cap).read_until(b'\n', &mut self.buf) {
            Ok(0) => None,
            Ok(n) if n > LINE_BYTES_MAX => {
                self.stopped = true;
                Some(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "line {} is longer than the line-length cap of {LINE_BYTES_MAX} bytes (a binary file, or one without newlines?)",
                        self.line + 1
                    ),
                )))
            }
            Ok(_) => {
                self.line += 1;
                Some(Ok(&self.buf))
            }
            Err(e) => {
                self.stopped = true;
                Some(Err(e))
            }
        }
    }

    /// The next line that `parse` turns into a value (`Ok(None)` skips a line). A line that
    /// is not UTF-8 fails with `not_utf8`; any error stops the reader.
    pub fn next_parsed<T>(
        &mut self,
        not_utf8: &str,
        mut parse: impl FnMut(&str) -> Result<Option<T>, String>,
    ) -> Option<Result<T, LineError>> {
        self.next_decoded(|bytes| match std::str::from_utf8(bytes) {
            Ok(text) => parse(text),
            Err(_) => Err(not_utf8.to_string()),
        })
    }

    /// [`Lines::next_parsed`] over the line's raw bytes (newline included): for decoders
    /// that parse bytes and check UTF-8 only where they need text.
    pub fn next_decoded<T>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> Result<Option<T>, String>,
    ) -> Option<Result<T, LineError>> {
        loop {
            let parsed = match self.next_line()? {
                Ok(bytes) => decode(bytes),
                Err(e) => return Some(Err(LineError::Io(e))),
            };
            match parsed {
                Ok(Some(v)) => return Some(Ok(v)),
                Ok(None) => continue,
                Err(reason) => {
                    self.stopped = true;
                    return Some(Err(LineError::Parse(reason)));
                }
            }
        }
    }
}

impl crate::WorkloadError {
    /// The error `e` of `lines`, naming its file (and line).
    pub(crate) fn from_line(lines: &Lines, e: LineError) -> crate::WorkloadError {
        let path = lines.path().to_path_buf();
        match e {
            LineError::Io(source) => crate::WorkloadError::Io { path, source },
            LineError::Parse(reason) => crate::WorkloadError::Parse {
                path,
                line: lines.line(),
                reason,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_and_the_first_error_stops_them() {
        let input = Box::new(std::io::Cursor::new(b"1\n\n2\nx\n3\n".to_vec()));
        let mut lines = Lines::new(Path::new("t"), input);
        let parse = |t: &str| {
            let t = t.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<u32>().map(Some).map_err(|_| format!("`{t}`"))
        };
        assert_eq!(lines.next_parsed("utf8", parse).unwrap().unwrap(), 1);
        assert_eq!(lines.next_parsed("utf8", parse).unwrap().unwrap(), 2);
        assert_eq!(lines.line(), 3);
        match lines.next_parsed("utf8", parse) {
            Some(Err(LineError::Parse(r))) => assert_eq!(r, "`x`"),
            other => panic!("{other:?}"),
        }
        assert_eq!(lines.line(), 4);
        assert!(lines.stopped());
        assert!(lines.next_parsed("utf8", parse).is_none());
    }

    #[test]
    fn a_line_without_end_fails_naming_the_line_and_the_cap() {
        let endless = std::io::repeat(0).take(LINE_BYTES_MAX as u64 * 3);
        let input = Box::new(std::io::BufReader::new(
            std::io::Cursor::new(b"1\n".to_vec()).chain(endless),
        ));
        let mut lines = Lines::new(Path::new("t"), input);
        assert!(lines.next_line().unwrap().is_ok());
        let e = lines.next_line().unwrap().unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains(&LINE_BYTES_MAX.to_string()),
            "{e}"
        );
        assert!(lines.next_line().is_none());
    }

    #[test]
    fn non_utf8_lines_fail_with_the_given_reason() {
        let input = Box::new(std::io::Cursor::new(vec![0xff, b'\n']));
        let mut lines = Lines::new(Path::new("t"), input);
        match lines.next_parsed("not text", |_| Ok(Some(()))) {
            Some(Err(LineError::Parse(r))) => assert_eq!(r, "not text"),
            other => panic!("{other:?}"),
        }
    }
}
