//! RocksDB through its C API (`rocksdb/c.h`), linked from the system library (see build.rs
//! for why not the `rocksdb` crate). Only the dozen functions the adapter calls are declared.
//!
//! Settings, chosen to match the other engines of `compare`:
//! - **durable writes**: the WAL on (RocksDB's default); the puts of a commit group go into one
//!   indexed write batch, written with `sync = true` at `commit`, so a commit costs one WAL
//!   append and one fsync, as a redb or LMDB commit of the same group does;
//! - reads between commits see the group's puts (the batch's index merged over the database);
//! - **compression off** (flashlab, redb and LMDB store values as they are);
//! - an LRU **block cache** of [`RocksConfig::block_cache_bytes`]; reads also go through the OS
//!   page cache (buffered I/O, RocksDB's default), as redb's and LMDB's do;
//! - everything else at RocksDB's defaults (64 MiB memtable, leveled compaction, two
//!   background jobs).

use lab::harness::kv_bench::driver::{Engine, EngineError};
use std::ffi::{c_char, c_int, c_uchar, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

#[repr(C)]
struct Db([u8; 0]);
#[repr(C)]
struct Opts([u8; 0]);
#[repr(C)]
struct ReadOpts([u8; 0]);
#[repr(C)]
struct WriteOpts([u8; 0]);
#[repr(C)]
struct TableOpts([u8; 0]);
#[repr(C)]
struct Cache([u8; 0]);
#[repr(C)]
struct Batch([u8; 0]);
#[repr(C)]
struct Iter([u8; 0]);
#[repr(C)]
struct Pinned([u8; 0]);

const NO_COMPRESSION: c_int = 0;

unsafe extern "C" {
    fn rocksdb_options_create() -> *mut Opts;
    fn rocksdb_options_destroy(o: *mut Opts);
    fn rocksdb_options_set_create_if_missing(o: *mut Opts, v: c_uchar);
    fn rocksdb_options_set_compression(o: *mut Opts, v: c_int);
    fn rocksdb_options_set_block_based_table_factory(o: *mut Opts, t: *mut TableOpts);
    fn rocksdb_block_based_options_create() -> *mut TableOpts;
    fn rocksdb_block_based_options_destroy(t: *mut TableOpts);
    fn rocksdb_block_based_options_set_block_cache(t: *mut TableOpts, c: *mut Cache);
    fn rocksdb_cache_create_lru(capacity: usize) -> *mut Cache;
    fn rocksdb_cache_destroy(c: *mut Cache);
    fn rocksdb_open(o: *const Opts, name: *const c_char, err: *mut *mut c_char) -> *mut Db;
    fn rocksdb_close(db: *mut Db);
    fn rocksdb_free(p: *mut c_void);
    fn rocksdb_readoptions_create() -> *mut ReadOpts;
    fn rocksdb_readoptions_destroy(r: *mut ReadOpts);
    fn rocksdb_writeoptions_create() -> *mut WriteOpts;
    fn rocksdb_writeoptions_destroy(w: *mut WriteOpts);
    fn rocksdb_writeoptions_set_sync(w: *mut WriteOpts, v: c_uchar);
    fn rocksdb_get_pinned(
        db: *mut Db,
        r: *const ReadOpts,
        key: *const c_char,
        klen: usize,
        err: *mut *mut c_char,
    ) -> *mut Pinned;
    fn rocksdb_pinnableslice_value(p: *const Pinned, vlen: *mut usize) -> *const c_char;
    fn rocksdb_pinnableslice_destroy(p: *mut Pinned);
    fn rocksdb_writebatch_wi_create(reserved_bytes: usize, overwrite_keys: c_uchar) -> *mut Batch;
    fn rocksdb_writebatch_wi_destroy(b: *mut Batch);
    fn rocksdb_writebatch_wi_clear(b: *mut Batch);
    fn rocksdb_writebatch_wi_count(b: *mut Batch) -> c_int;
    fn rocksdb_writebatch_wi_put(
        b: *mut Batch,
        key: *const c_char,
        klen: usize,
        val: *const c_char,
        vlen: usize,
    );
    fn rocksdb_writebatch_wi_delete(b: *mut Batch, key: *const c_char, klen: usize);
    fn rocksdb_writebatch_wi_get_from_batch_and_db(
        b: *mut Batch,
        db: *mut Db,
        r: *const ReadOpts,
        key: *const c_char,
        klen: usize,
        vlen: *mut usize,
        err: *mut *mut c_char,
    ) -> *mut c_char;
    fn rocksdb_write_writebatch_wi(
        db: *mut Db,
        w: *const WriteOpts,
        b: *mut Batch,
        err: *mut *mut c_char,
    );
    fn rocksdb_writebatch_wi_create_iterator_with_base(b: *mut Batch, base: *mut Iter)
        -> *mut Iter;
    fn rocksdb_create_iterator(db: *mut Db, r: *const ReadOpts) -> *mut Iter;
    fn rocksdb_iter_destroy(i: *mut Iter);
    fn rocksdb_iter_seek(i: *mut Iter, key: *const c_char, klen: usize);
    fn rocksdb_iter_valid(i: *const Iter) -> c_uchar;
    fn rocksdb_iter_next(i: *mut Iter);
    fn rocksdb_iter_key(i: *const Iter, klen: *mut usize) -> *const c_char;
    fn rocksdb_iter_value(i: *const Iter, vlen: *mut usize) -> *const c_char;
    fn rocksdb_iter_get_error(i: *const Iter, err: *mut *mut c_char);
}

/// A RocksDB call that failed: which call, and RocksDB's message.
#[derive(Debug, thiserror::Error)]
#[error("RocksDB {call}: {message}")]
pub struct RocksError {
    pub call: &'static str,
    pub message: String,
}

/// Turn RocksDB's error out-parameter into a Result (and free the message).
fn check(call: &'static str, err: *mut c_char) -> Result<(), RocksError> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null error is a NUL-terminated string RocksDB malloc'ed for us to free.
    let message = unsafe { CStr::from_ptr(err) }
        .to_string_lossy()
        .into_owned();
    unsafe { rocksdb_free(err.cast()) };
    Err(RocksError { call, message })
}

/// How the adapter opens RocksDB (see the module docs for the fixed settings).
#[derive(Clone, Copy, Debug)]
pub struct RocksConfig {
    /// Capacity of the LRU block cache, bytes.
    pub block_cache_bytes: usize,
}

/// RocksDB in a directory, with one indexed write batch per commit group.
pub struct Rocks {
    db: *mut Db,
    opts: *mut Opts,
    table: *mut TableOpts,
    cache: *mut Cache,
    read: *mut ReadOpts,
    write: *mut WriteOpts,
    batch: *mut Batch,
}

impl Rocks {
    /// Create (or open) the database in `dir`.
    pub fn create(dir: &Path, cfg: RocksConfig) -> Result<Rocks, RocksError> {
        let name = CString::new(dir.as_os_str().as_bytes()).map_err(|_| RocksError {
            call: "open",
            message: format!("the path {} holds a NUL byte", dir.display()),
        })?;
        // SAFETY: each object is created here, configured, and owned by the returned Rocks,
        // which destroys it once (Drop); the pointers passed are the ones just created.
        unsafe {
            let mut r = Rocks {
                db: ptr::null_mut(),
                opts: rocksdb_options_create(),
                table: rocksdb_block_based_options_create(),
                cache: rocksdb_cache_create_lru(cfg.block_cache_bytes),
                read: rocksdb_readoptions_create(),
                write: rocksdb_writeoptions_create(),
                batch: rocksdb_writebatch_wi_create(0, 1),
            };
            rocksdb_options_set_create_if_missing(r.opts, 1);
            rocksdb_options_set_compression(r.opts, NO_COMPRESSION);
            rocksdb_block_based_options_set_block_cache(r.table, r.cache);
            rocksdb_options_set_block_based_table_factory(r.opts, r.table);
            rocksdb_writeoptions_set_sync(r.write, 1);
            let mut err = ptr::null_mut();
            r.db = rocksdb_open(r.opts, name.as_ptr(), &mut err);
            check("open", err)?;
            assert!(!r.db.is_null(), "an open without error returns a database");
            Ok(r)
        }
    }

    fn pending(&self) -> bool {
        // SAFETY: the batch lives as long as self.
        unsafe { rocksdb_writebatch_wi_count(self.batch) > 0 }
    }

    /// The length of `key`'s value in the batch or the database; the value is read.
    fn value_len(&mut self, key: &[u8]) -> Result<Option<usize>, RocksError> {
        let (k, klen) = (key.as_ptr().cast::<c_char>(), key.len());
        let mut err = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the key slice outlives the call; RocksDB's results are freed as its API
        // says (pinned slice: destroy; batch lookup: rocksdb_free).
        unsafe {
            if self.pending() {
                let v = rocksdb_writebatch_wi_get_from_batch_and_db(
                    self.batch, self.db, self.read, k, klen, &mut len, &mut err,
                );
                check("get", err)?;
                if v.is_null() {
                    return Ok(None);
                }
                rocksdb_free(v.cast());
                return Ok(Some(len));
            }
            let p = rocksdb_get_pinned(self.db, self.read, k, klen, &mut err);
            check("get", err)?;
            if p.is_null() {
                return Ok(None);
            }
            rocksdb_pinnableslice_value(p, &mut len);
            rocksdb_pinnableslice_destroy(p);
        }
        Ok(Some(len))
    }

    /// Up to `records` records from `start` on, in key order (the batch merged in), each key
    /// and value lent to `visit`.
    fn scan_from(
        &mut self,
        start: &[u8],
        records: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, RocksError> {
        // SAFETY: the iterator is created, used and destroyed here; with a batch, the
        // batch's iterator takes ownership of the base iterator (RocksDB's C API).
        unsafe {
            let mut it = rocksdb_create_iterator(self.db, self.read);
            if self.pending() {
                it = rocksdb_writebatch_wi_create_iterator_with_base(self.batch, it);
            }
            rocksdb_iter_seek(it, start.as_ptr().cast(), start.len());
            let mut got = 0;
            while got < records && rocksdb_iter_valid(it) != 0 {
                let (mut klen, mut vlen) = (0usize, 0usize);
                let k = rocksdb_iter_key(it, &mut klen);
                let v = rocksdb_iter_value(it, &mut vlen);
                // The iterator's key and value stay valid until it moves (RocksDB's C API).
                let lent = |p: *const c_char, n: usize| match p.is_null() {
                    true => &[][..],
                    false => std::slice::from_raw_parts(p.cast::<u8>(), n),
                };
                visit(lent(k, klen), lent(v, vlen));
                got += 1;
                rocksdb_iter_next(it);
            }
            let mut err = ptr::null_mut();
            rocksdb_iter_get_error(it, &mut err);
            rocksdb_iter_destroy(it);
            check("iterate", err)?;
            Ok(got)
        }
    }
}

impl Drop for Rocks {
    fn drop(&mut self) {
        // SAFETY: each pointer was created in `create` and is destroyed once, the database
        // first (it may still use the options' cache while closing).
        unsafe {
            rocksdb_writebatch_wi_destroy(self.batch);
            if !self.db.is_null() {
                rocksdb_close(self.db);
            }
            rocksdb_readoptions_destroy(self.read);
            rocksdb_writeoptions_destroy(self.write);
            rocksdb_options_destroy(self.opts);
            rocksdb_block_based_options_destroy(self.table);
            rocksdb_cache_destroy(self.cache);
        }
    }
}

impl Engine for Rocks {
    fn name(&self) -> &str {
        "rocksdb"
    }
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>, EngineError> {
        Ok(self.value_len(key)?)
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
        // SAFETY: the batch copies key and value before returning.
        unsafe {
            rocksdb_writebatch_wi_put(
                self.batch,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        };
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> Result<(), EngineError> {
        // SAFETY: the batch copies the key before returning.
        unsafe { rocksdb_writebatch_wi_delete(self.batch, key.as_ptr().cast(), key.len()) };
        Ok(())
    }
    fn scan(
        &mut self,
        start: &[u8],
        records: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<usize, EngineError> {
        Ok(self.scan_from(start, records, visit)?)
    }
    fn commit(&mut self) -> Result<(), EngineError> {
        if !self.pending() {
            return Ok(());
        }
        let mut err = ptr::null_mut();
        // SAFETY: database, options and batch live as long as self.
        unsafe { rocksdb_write_writebatch_wi(self.db, self.write, self.batch, &mut err) };
        check("write (sync)", err)?;
        // SAFETY: as above; the batch is written, so it starts the next group empty.
        unsafe { rocksdb_writebatch_wi_clear(self.batch) };
        Ok(())
    }
}
