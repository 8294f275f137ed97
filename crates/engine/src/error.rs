//! Errors of the engine: each names the page/file and what went wrong.
//!
//! Damage has one vocabulary, used by the pager, the trees, the heap and the key-value store:
//! a [`Corruption`] names the [`Structure`] that does not check out, the file and device page
//! and byte offset where known, and a [`Fault`] saying what was expected there and what was
//! found, so a caller (or a test) can tell a torn write from a foreign page without parsing
//! a message. Refusals that are not damage (a key too large, a bad argument) have their own
//! variants of [`EngineError`].

use crate::page::PageKind;
use blockdev::DevError;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error("device: {0}")]
    Dev(#[from] DevError),
    /// Damage on the device: never returned as data.
    #[error("{0}")]
    Corrupt(Box<Corruption>),
    #[error("invalid engine setting `{field}` = {value}: {reason}")]
    Config {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("{what} is full: {reason}")]
    Full { what: &'static str, reason: String },
    /// A key or value over its limit (refused; nothing is written).
    #[error("{what} of {len_bytes} bytes is larger than the limit of {max_bytes} bytes")]
    TooLarge {
        what: &'static str,
        len_bytes: u64,
        max_bytes: u64,
    },
    /// A structure refused before it is encoded (a caller's bug or bad input; nothing on the
    /// device is damaged).
    #[error("{structure} cannot be encoded: `{field}` is {found}, expected {expected}")]
    Invalid {
        structure: Structure,
        field: &'static str,
        expected: String,
        found: String,
    },
    #[error("I/O on {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    /// Where damage on the device was found, as a byte offset, when this error is damage
    /// and its offset is known.
    pub fn offset(&self) -> Option<u64> {
        self.corruption().and_then(|c| c.offset)
    }

    /// The device page damage was found on, when this error is damage on a known page.
    pub fn page(&self) -> Option<u64> {
        self.corruption().and_then(|c| c.page)
    }

    /// The damage, when this error is damage.
    pub fn corruption(&self) -> Option<&Corruption> {
        match self {
            EngineError::Corrupt(c) => Some(c),
            _ => None,
        }
    }

    /// The device page (where known) and the fault, when this error is damage.
    pub fn damage(&self) -> Option<(Option<u64>, &Fault)> {
        self.corruption().map(|c| (c.page, &c.fault))
    }

    /// A corruption of `structure` found at device page `page`.
    pub fn corrupt(structure: Structure, page: u64, fault: Fault) -> EngineError {
        Corruption::new(structure, fault).on_page(page).into()
    }
}

impl From<Corruption> for EngineError {
    fn from(c: Corruption) -> EngineError {
        EngineError::Corrupt(Box::new(c))
    }
}

/// Which on-device structure does not check out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Structure {
    /// A sealed page as the pager reads it (header, checksum, kind, id, version).
    Page,
    /// One of the pager's two alternating meta slots.
    MetaSlot,
    /// A key-value store's superblock slot.
    Superblock,
    /// A key-value store's DB header: one per commit.
    CommitHeader,
    /// A node of the key-value store's copy-on-write index.
    IndexNode,
    /// A pointer to an index node.
    NodePointer,
    /// A pointer to a document.
    DocPointer,
    /// A data page of the key-value store (packed documents).
    DataPage,
    /// One key-value document.
    Document,
    /// A node of the in-place / append-only B-trees.
    BTreeNode,
    /// A heap page of slotted records.
    HeapPage,
    /// BFTL's log of index units.
    IndexUnits,
    /// A node-to-page mapping table.
    MappingTable,
    /// A write-ahead log record.
    Wal,
}

impl Structure {
    /// The structure that a page of `kind` holds.
    pub fn of_kind(kind: PageKind) -> Structure {
        match kind {
            PageKind::Meta => Structure::MetaSlot,
            PageKind::BTreeLeaf | PageKind::BTreeInner => Structure::BTreeNode,
            PageKind::Heap => Structure::HeapPage,
            PageKind::IndexUnits => Structure::IndexUnits,
            PageKind::KvSuperblock => Structure::Superblock,
            PageKind::KvHeader => Structure::CommitHeader,
            PageKind::KvIndex => Structure::IndexNode,
            PageKind::KvData => Structure::DataPage,
        }
    }
}

impl std::fmt::Display for Structure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Structure::Page => "page",
            Structure::MetaSlot => "meta slot",
            Structure::Superblock => "superblock",
            Structure::CommitHeader => "DB header",
            Structure::IndexNode => "index node",
            Structure::NodePointer => "node pointer",
            Structure::DocPointer => "document pointer",
            Structure::DataPage => "data page",
            Structure::Document => "document",
            Structure::BTreeNode => "B-tree node",
            Structure::HeapPage => "heap page",
            Structure::IndexUnits => "index-unit log",
            Structure::MappingTable => "mapping table",
            Structure::Wal => "WAL record",
        })
    }
}

/// Damage: which structure, where (file, device page, byte offset — each where known) and
/// what is wrong. A decoder knows only the offset in the buffer it was given; the caller
/// that read the buffer places it ([`Corruption::on_page`], [`Corruption::rebase`],
/// [`Corruption::in_file`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corruption {
    pub structure: Structure,
    /// The device page, where known.
    pub page: Option<u64>,
    /// The byte offset: in the file once placed, else in the decoded buffer.
    pub offset: Option<u64>,
    pub fault: Fault,
    /// The file and what the damage means, where the caller said (boxed: decoders return
    /// corruption on their hot path, and these are rare).
    pub context: Option<Box<Context>>,
}

/// Where damage was found and what it means, as the caller that read it knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// The file (or device) name.
    pub file: Option<String>,
    /// What the damage means to the caller (e.g. "a durable commit is corrupt, not a torn
    /// write"), with its advice.
    pub meaning: Option<String>,
}

impl Corruption {
    pub fn new(structure: Structure, fault: Fault) -> Corruption {
        Corruption {
            structure,
            page: None,
            offset: None,
            fault,
            context: None,
        }
    }

    /// The same damage at byte `offset` (of the buffer or file).
    pub fn at(mut self, offset: u64) -> Corruption {
        self.offset = Some(offset);
        self
    }

    /// The same damage, found on device page `page`.
    pub fn on_page(mut self, page: u64) -> Corruption {
        self.page = Some(page);
        self
    }

    /// The same damage with its offset moved by `base` (where the decoded buffer sits).
    pub fn rebase(mut self, base: u64) -> Corruption {
        self.offset = self.offset.map(|o| o.saturating_add(base));
        self
    }

    /// The same damage, found in file (or device) `file`.
    pub fn in_file(mut self, file: &str) -> Corruption {
        self.context.get_or_insert_default().file = Some(file.to_string());
        self
    }

    /// The same damage with what it means to the caller.
    pub fn meaning(mut self, meaning: impl Into<String>) -> Corruption {
        self.context.get_or_insert_default().meaning = Some(meaning.into());
        self
    }

    /// The file (or device) the damage was found in, where known.
    pub fn file(&self) -> Option<&str> {
        self.context.as_ref().and_then(|c| c.file.as_deref())
    }

    /// What the damage means to the caller, where it said.
    pub fn meaning_of(&self) -> Option<&str> {
        self.context.as_ref().and_then(|c| c.meaning.as_deref())
    }
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = self.file() {
            write!(f, "{file}: ")?;
        }
        if let Some(m) = self.meaning_of() {
            write!(f, "{m}: ")?;
        }
        match (self.structure, self.page) {
            (Structure::Page, Some(p)) => write!(f, "page {p}")?,
            (s, Some(p)) => write!(f, "{s} at page {p}")?,
            (s, None) => write!(f, "{s}")?,
        }
        match (self.page, self.offset) {
            (Some(_), Some(o)) => write!(f, " (byte {o})")?,
            (None, Some(o)) => write!(f, " at byte {o}")?,
            (_, None) => {}
        }
        write!(f, " is corrupt: {} (the data on the device is damaged or torn; restore from a backup or re-create the structure)", self.fault)
    }
}

impl std::error::Error for Corruption {}

/// What is wrong: what was expected, what was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Fault {
    #[error("it is blank (never written or trimmed), expected a sealed structure")]
    Blank,
    #[error("expected a page of at least {expected} bytes, found {found}")]
    TooSmall { expected: usize, found: usize },
    #[error("needs {needed_bytes} bytes, only {available_bytes} are there (torn or truncated)")]
    Truncated {
        needed_bytes: u64,
        available_bytes: u64,
    },
    #[error("expected magic {expected:#010x}, found {found:#010x}")]
    Magic { expected: u32, found: u32 },
    #[error("expected format version {expected}, found {found}")]
    FormatVersion { expected: u8, found: u8 },
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (torn or corrupt write)")]
    Checksum { stored: u32, computed: u32 },
    #[error("unknown page kind {found}")]
    UnknownKind { found: u8 },
    #[error("expected a {expected} page, found a {found:?} page")]
    Kind {
        expected: &'static str,
        found: PageKind,
    },
    #[error("`{field}` is {found}, expected {expected}")]
    Field {
        field: &'static str,
        expected: String,
        found: String,
    },
    #[error("its version (the commit that wrote it) is {found}, newer than the newest durable commit {newest}: a stale or foreign page, not data")]
    Version { found: u64, newest: u64 },
    #[error("{what}: expected {expected}, found {found}")]
    Length {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("{what}: expected {expected}, found {found}")]
    Id {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("node keys are not strictly ascending (key {at} is {found}, after {previous})")]
    KeyOrder {
        at: usize,
        previous: u64,
        found: u64,
    },
    #[error("unknown index-unit op {found} (expected 0..=4)")]
    UnitOp { found: u8 },
    #[error("slot {slot} of a heap page holding {count} records")]
    Slot { slot: u16, count: u16 },
    #[error("node {node} is not in the mapping table")]
    Unmapped { node: u64 },
    #[error("neither meta slot ({first} or {second}) holds a valid {what}")]
    NoMeta {
        what: &'static str,
        first: u64,
        second: u64,
    },
    #[error("{what}: expected at most {limit}, found {found}")]
    OutOfRange {
        what: &'static str,
        limit: u64,
        found: u64,
    },
}
