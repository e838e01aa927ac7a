//! The language server's salsa database. Each source file's text is an input; the queries are the
//! file's index and symbols (its own text only), the build's read of the file (ocf-load's per-file
//! step, its own text only), the pack's build (every file's read and its dependencies' releases:
//! the pack-wide checks), and each file's diagnostics, read from the build through a firewall
//! (`pack_problems`) whose unchanged value stops a re-check from spreading.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ocf_load::build::source::{Role, role_of};
use ocf_load::build::steps::FileRead;
use ocf_load::build::{BuildOptions, Problem, ReadLimits, build_files_with};
use ocf_model::PackRelease;
use salsa::{DatabaseKeyIndex, Event, EventKind, Setter};

use crate::symbols::{self, FileSymbols};
use crate::text::LineIndex;
use crate::yaml::{self, YamlIndex};

#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<Arc<Mutex<Vec<DatabaseKeyIndex>>>>,
}

impl Default for Database {
    fn default() -> Self {
        Database {
            storage: salsa::Storage::new(None),
            log: None,
        }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records each query that really runs, for the tests and the benchmark.
    pub fn with_execution_log() -> Database {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let callback = move |event: Event| {
            if let EventKind::WillExecute { database_key } = event.kind {
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(database_key);
            }
        };
        Database {
            storage: salsa::Storage::new(Some(Box::new(callback))),
            log: Some(log),
        }
    }

    /// The queries that ran since the last call, as `query(key)`, in order.
    pub fn take_executed(&self) -> Vec<String> {
        let Some(log) = &self.log else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
        keys.into_iter()
            .map(|key| {
                let name = salsa::Database::ingredient_debug_name(self, key.ingredient_index());
                // A file's own queries name the file; the others are counted by name.
                if name == "file_index" || name == "file_read" {
                    use salsa::plumbing::FromId;
                    let file = SourceFile::from_id(key.key_index());
                    return format!("{name}({})", file.name(self));
                }
                name.to_string()
            })
            .collect()
    }
}

/// A pack source folder: its root and its files, with the packs it depends on (found by the
/// server, never a loop).
#[salsa::input(debug)]
pub struct Pack {
    #[returns(ref)]
    pub root: PathBuf,
    #[returns(ref)]
    pub files: Vec<SourceFile>,
    #[returns(ref)]
    pub dependencies: Vec<Pack>,
}

/// One source file: its name in the pack (`rules/abilities.yaml`) and its text.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: String,
}

/// The file's tolerant YAML index and its line index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indexed {
    pub yaml: YamlIndex,
    pub lines: LineIndex,
    pub symbols: FileSymbols,
}

#[salsa::tracked(returns(ref))]
pub fn file_index(db: &dyn salsa::Database, file: SourceFile) -> Arc<Indexed> {
    let text = file.text(db);
    let role = role_of(file.name(db)).unwrap_or(Role::Content);
    let limits = ocf_load::build::ReadLimits::default();
    let yaml = yaml::index(text, limits.max_nesting);
    let typed = symbols::read_typed(role, text);
    let symbols = symbols::collect(role, &yaml, typed.as_ref());
    Arc::new(Indexed {
        yaml,
        lines: LineIndex::new(text),
        symbols,
    })
}

/// The build's read of one file (ocf-load's per-file step): its typed document and positions. Only
/// a change to the file's own text reads it again.
#[salsa::tracked(returns(ref), no_eq)]
pub fn file_read(db: &dyn salsa::Database, file: SourceFile) -> Arc<FileRead> {
    let name = file.name(db);
    let role = role_of(name).unwrap_or(Role::Content);
    Arc::new(FileRead::read(
        name,
        role,
        file.text(db),
        &ReadLimits::default(),
    ))
}

thread_local! {
    /// The formulas the builds parsed, kept between builds: a keystroke changes one formula, and
    /// the build would parse every other again. Parsing is pure, so a kept parse is the parse the
    /// build would make; the memo is emptied when it grows past [`MAX_KEPT_FORMULAS`] (formulas
    /// typed and gone).
    static FORMULAS: std::cell::RefCell<ocf_load::parsed::Memo> = Default::default();
}
const MAX_KEPT_FORMULAS: usize = 200_000;

/// The build of the pack: what `ocf check` reports for it, and its release when it builds.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub problems: Vec<Problem>,
    pub release: Option<Arc<PackRelease>>,
}

#[salsa::tracked(returns(ref))]
pub fn build(db: &dyn salsa::Database, pack: Pack) -> Arc<Built> {
    let files: Vec<(String, String)> = pack
        .files(db)
        .iter()
        .map(|f| (f.name(db).clone(), f.text(db).clone()))
        .collect();
    let dependencies = pack
        .dependencies(db)
        .iter()
        .filter_map(|dep| release(db, *dep).clone())
        .map(|r| (*r).clone())
        .collect();
    let options = BuildOptions {
        dependencies,
        ..BuildOptions::default()
    };
    let sources = pack.files(db);
    let read = |index: usize, _: &str, _: Role, _: &str| file_read(db, sources[index]).clone();
    let report = FORMULAS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() > MAX_KEPT_FORMULAS {
            memo.clear();
        }
        ocf_load::parsed::scope_in(&mut memo, || build_files_with(&files, &options, read))
    });
    Arc::new(Built {
        problems: report.problems,
        release: report.release.map(Arc::new),
    })
}

/// The pack's release, when it builds: what its dependents' builds are given.
#[salsa::tracked]
pub fn release(db: &dyn salsa::Database, pack: Pack) -> Option<Arc<PackRelease>> {
    build(db, pack).release.clone()
}

/// One file's problems from the pack's build. The name is its identity, the problems a tracked
/// field: when the build runs again, a file whose problems are the same keeps its value, and
/// what read it (its diagnostics) does not run again.
#[salsa::tracked(debug)]
pub struct FileProblems<'db> {
    #[returns(ref)]
    pub name: String,
    #[tracked]
    #[returns(ref)]
    pub problems: Vec<Problem>,
}

/// The build's problems by file, one entry per file of the pack (and one, named `""`, for the
/// problems of the folder itself), in the pack's file order.
#[salsa::tracked(returns(ref))]
pub fn pack_problems<'db>(db: &'db dyn salsa::Database, pack: Pack) -> Vec<FileProblems<'db>> {
    let built = build(db, pack);
    let mut names: Vec<String> = vec![String::new()];
    names.extend(pack.files(db).iter().map(|f| f.name(db).clone()));
    names
        .into_iter()
        .map(|name| {
            let problems = built
                .problems
                .iter()
                .filter(|p| p.file == name)
                .cloned()
                .collect();
            FileProblems::new(db, name, problems)
        })
        .collect()
}

/// One diagnostic, in the file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub start: usize,
    pub end: usize,
    pub error: bool,
    pub code: String,
    pub message: String,
}

/// The file's problems from the build, each at its range in the file.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn salsa::Database, pack: Pack, file: SourceFile) -> Vec<Diag> {
    let name = file.name(db);
    let text = file.text(db);
    let indexed = file_index(db, file);
    let by_file = pack_problems(db, pack);
    let mut out = Vec::new();
    for entry in by_file {
        // The folder's own problems show in its manifest.
        let mine = entry.name(db) == name || (entry.name(db).is_empty() && name == "pack.yaml");
        if mine {
            out.extend(
                entry
                    .problems(db)
                    .iter()
                    .map(|p| crate::diagnostics::place(p, text, indexed)),
            );
        }
    }
    out
}

/// Sets a file's text, when it differs (an unchanged text keeps every memo).
pub fn set_text(db: &mut Database, file: SourceFile, text: String) {
    if file.text(db) != &text {
        file.set_text(db).to(text);
    }
}
