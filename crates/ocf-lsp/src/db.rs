//! The language server's salsa database. Each source file's text is an input; the queries are
//! ocf-load's build steps ([`ocf_load::build::steps`]), split by what they read:
//!
//! - a file's own: its read (`file_read`), its index and symbols (`file_index`), its expansion and
//!   walk (`file_expanded`), what it declares (`file_declared`), the budget the expansion spent up
//!   to it (`expansion_spent`), and its document checks (`file_checks`, which also read the
//!   pack's scope);
//! - the pack's: its files in path order with their size limits (`pack_layout`), its dependencies'
//!   releases (`given`), its families (`pack_families`), its scope (`pack_scope`: what every file
//!   declares), and the rest of the build (`build`: merge, content checks, the formula type check
//!   and loadRuleset's agreement).
//!
//! The pack queries that read every file compare their value with the last, so a keystroke that
//! changes no declaration stops at them: the other files' expansions and checks are kept. Each
//! file's diagnostics are read from the build through a firewall (`pack_problems`) whose unchanged
//! value stops a re-check from spreading.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ocf_load::build::source::{Role, role_of};
use ocf_load::build::steps::{
    self, ExpandedFile, Families, FileDeclared, FileRead, PackScope, ReadDocument, Steps,
};
use ocf_load::build::{BuildOptions, Layout, Problem, ReadLimits, build_steps};
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
                const PER_FILE: &[&str] = &[
                    "file_index",
                    "file_read",
                    "file_expanded",
                    "expansion_spent",
                    "file_declared",
                    "file_checks",
                ];
                if PER_FILE.contains(&&*name) {
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

/// One source file: its name in the pack (`rules/abilities.yaml`), its text and its pack.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub name: String,
    #[returns(ref)]
    pub text: String,
    pub pack: Pack,
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
    // The build's read of the file: its typed document, read once for both.
    let read = file_read(db, file);
    let typed = match &read.read {
        Ok(ReadDocument::Rules(doc, _)) => Some(symbols::Typed::Rules(doc)),
        Ok(ReadDocument::Content { items, listed, .. }) => {
            Some(symbols::Typed::Content(items, *listed))
        }
        _ => None,
    };
    let symbols = symbols::collect(role, &yaml, typed);
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
    /// The formulas' type checks, kept between builds in the same way (for the same visible
    /// fields; bounded in [`ocf_load::formulas::Kept`]).
    static CHECKS: std::cell::RefCell<ocf_load::formulas::Kept> = Default::default();
}
const MAX_KEPT_FORMULAS: usize = 200_000;

/// The build of the pack: what `ocf check` reports for it, and its release when it builds.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub problems: Vec<Problem>,
    pub release: Option<Arc<PackRelease>>,
    pub draft: Option<Arc<PackRelease>>,
}

/// The pack's files the build reads, in path order, with the size limits' problems: only a
/// file's length is read, so an edit that keeps every file within the limits keeps it.
#[salsa::tracked(returns(ref))]
pub fn pack_layout(db: &dyn salsa::Database, pack: Pack) -> Arc<Layout> {
    let sizes: Vec<(&str, u64)> = pack
        .files(db)
        .iter()
        .map(|f| (f.name(db).as_str(), f.text(db).len() as u64))
        .collect();
    Arc::new(Layout::of(&sizes, &ReadLimits::default()))
}

/// The releases of the pack's dependencies: each one's release, or its draft when its build has
/// errors (so that its errors do not hide the pack's own).
#[salsa::tracked(returns(ref))]
pub fn given(db: &dyn salsa::Database, pack: Pack) -> Arc<Vec<PackRelease>> {
    Arc::new(
        pack.dependencies(db)
            .iter()
            .filter_map(|dep| given_release(db, *dep).clone())
            .map(|(r, _)| (*r).clone())
            .collect(),
    )
}

/// The IDs of the pack's dependencies given as drafts of builds with errors.
#[salsa::tracked(returns(ref))]
pub fn given_with_errors(db: &dyn salsa::Database, pack: Pack) -> Vec<String> {
    pack.dependencies(db)
        .iter()
        .filter_map(|dep| given_release(db, *dep).clone())
        .filter(|(_, errors)| *errors)
        .map(|(r, _)| r.id.as_str().to_owned())
        .collect()
}

/// What the pack gives its dependents: its release, else its draft (with `true`).
#[salsa::tracked]
pub fn given_release(db: &dyn salsa::Database, pack: Pack) -> Option<(Arc<PackRelease>, bool)> {
    let built = build(db, pack);
    match (&built.release, &built.draft) {
        (Some(release), _) => Some((release.clone(), false)),
        (None, Some(draft)) => Some((draft.clone(), true)),
        _ => None,
    }
}

/// Each of the pack's files by its index in `Pack::files`: what finds a file's place without a
/// scan of the pack (a scan per file made a keystroke quadratic in the pack's files). It reads only
/// the list of files, which a keystroke doesn't change.
#[salsa::tracked(returns(ref))]
pub fn file_positions(
    db: &dyn salsa::Database,
    pack: Pack,
) -> Arc<rustc_hash::FxHashMap<SourceFile, usize>> {
    Arc::new(
        pack.files(db)
            .iter()
            .enumerate()
            .map(|(i, &f)| (f, i))
            .collect(),
    )
}

/// For each index in `Pack::files`, the file's place in the layout's path order (`None`: not read).
#[salsa::tracked(returns(ref))]
fn layout_positions(db: &dyn salsa::Database, pack: Pack) -> Arc<Vec<Option<usize>>> {
    let mut out = vec![None; pack.files(db).len()];
    for (at, laid) in pack_layout(db, pack).files.iter().enumerate() {
        if let Some(slot) = out.get_mut(laid.index) {
            *slot = Some(at);
        }
    }
    Arc::new(out)
}

/// The file's index in its pack's `files`.
pub fn file_position(db: &dyn salsa::Database, file: SourceFile) -> Option<usize> {
    file_positions(db, *file.pack(db)).get(&file).copied()
}

/// The file's place in its pack's path order.
fn place(db: &dyn salsa::Database, file: SourceFile) -> Option<(Pack, Arc<Layout>, usize)> {
    let pack = *file.pack(db);
    let layout = pack_layout(db, pack).clone();
    let at = (*layout_positions(db, pack).get(file_position(db, file)?)?)?;
    Some((pack, layout, at))
}

/// The file's read as the build takes it: not read when it is over the size limits.
fn loaded(db: &dyn salsa::Database, file: SourceFile) -> Arc<FileRead> {
    match place(db, file) {
        Some((_, layout, at)) => match &layout.files[at].too_large {
            Some(problem) => {
                let laid = &layout.files[at];
                Arc::new(FileRead::unread(&laid.name, laid.role, problem.clone()))
            }
            None => file_read(db, file).clone(),
        },
        None => file_read(db, file).clone(),
    }
}

/// The pack's families: the manifest and the rules files' `families` and `viewFields`. It reads
/// every file's read; a keystroke that changes no family leaves it equal.
#[salsa::tracked(returns(ref))]
pub fn pack_families(db: &dyn salsa::Database, pack: Pack) -> Arc<Families> {
    let files = pack.files(db);
    let reads: Vec<Arc<FileRead>> = pack_layout(db, pack)
        .files
        .iter()
        .map(|f| loaded(db, files[f.index]))
        .collect();
    let reads: Vec<&FileRead> = reads.iter().map(|r| &**r).collect();
    Arc::new(steps::families(&reads, given(db, pack)))
}

/// The file expanded with its pack's families and walked.
#[salsa::tracked(returns(ref), no_eq)]
pub fn file_expanded(db: &dyn salsa::Database, file: SourceFile) -> Arc<ExpandedFile> {
    let read = loaded(db, file);
    let pack = *file.pack(db);
    let spent = match place(db, file) {
        Some((pack, layout, at)) if at > 0 => {
            *expansion_spent(db, pack.files(db)[layout.files[at - 1].index])
        }
        _ => 0,
    };
    Arc::new(steps::expand(&read, pack_families(db, pack), spent))
}

/// The pack's expansion budget spent up to and including the file: what the next file's
/// expansion starts from.
#[salsa::tracked]
pub fn expansion_spent(db: &dyn salsa::Database, file: SourceFile) -> usize {
    file_expanded(db, file).spent
}

/// What the file declares (after expansion): equal after a keystroke inside a formula.
#[salsa::tracked(returns(ref))]
pub fn file_declared(db: &dyn salsa::Database, file: SourceFile) -> Arc<FileDeclared> {
    Arc::new(steps::declared(&loaded(db, file), file_expanded(db, file)))
}

/// Where the pack's references resolve: what every file declares, and its dependencies.
#[salsa::tracked(returns(ref))]
pub fn pack_scope(db: &dyn salsa::Database, pack: Pack) -> Arc<PackScope> {
    let files = pack.files(db);
    let declared: Vec<&FileDeclared> = pack_layout(db, pack)
        .files
        .iter()
        .map(|f| &**file_declared(db, files[f.index]))
        .collect();
    Arc::new(PackScope::of(&declared, given(db, pack)))
}

/// The file's document checks: its references, tags, formulas' syntax and activation reads.
#[salsa::tracked(returns(ref))]
pub fn file_checks(db: &dyn salsa::Database, file: SourceFile) -> Arc<Vec<Problem>> {
    Arc::new(steps::checks(
        file_expanded(db, file),
        pack_scope(db, *file.pack(db)),
    ))
}

/// The build's steps as the queries above give them.
struct Queries<'a> {
    db: &'a dyn salsa::Database,
    pack: Pack,
    layout: Arc<Layout>,
}

impl Queries<'_> {
    fn file(&self, at: usize) -> SourceFile {
        self.pack.files(self.db)[self.layout.files[at].index]
    }
}

impl Steps for Queries<'_> {
    fn read(&mut self, at: usize) -> Arc<FileRead> {
        loaded(self.db, self.file(at))
    }

    fn families(&mut self) -> Arc<Families> {
        pack_families(self.db, self.pack).clone()
    }

    fn expanded(&mut self, at: usize) -> Arc<ExpandedFile> {
        file_expanded(self.db, self.file(at)).clone()
    }

    fn scope(&mut self) -> Arc<PackScope> {
        pack_scope(self.db, self.pack).clone()
    }

    fn checks(&mut self, at: usize) -> Arc<Vec<Problem>> {
        file_checks(self.db, self.file(at)).clone()
    }
}

/// The rest of the pack's build, from its files' steps: merge, content checks, the formula type
/// check and loadRuleset's agreement.
#[salsa::tracked(returns(ref))]
pub fn build(db: &dyn salsa::Database, pack: Pack) -> Arc<Built> {
    let layout = pack_layout(db, pack).clone();
    let options = BuildOptions {
        dependencies: given(db, pack).to_vec(),
        with_errors: given_with_errors(db, pack).clone(),
        ..BuildOptions::default()
    };
    let mut queries = Queries {
        db,
        pack,
        layout: layout.clone(),
    };
    let report = FORMULAS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if memo.len() > MAX_KEPT_FORMULAS {
            memo.clear();
        }
        CHECKS.with(|checks| {
            let mut checks = checks.borrow_mut();
            ocf_load::parsed::scope_in(&mut memo, || {
                ocf_load::formulas::kept(&mut checks, || {
                    build_steps(
                        layout.files.len(),
                        layout.problems.clone(),
                        &mut queries,
                        &options,
                    )
                })
            })
        })
    });
    Arc::new(Built {
        problems: report.problems,
        release: report.release.map(Arc::new),
        draft: report.draft.map(Arc::new),
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
    // Grouped once: a pack of many files with many problems is not scanned per file.
    let mut by_name: rustc_hash::FxHashMap<&str, Vec<Problem>> = Default::default();
    for problem in &built.problems {
        by_name
            .entry(problem.file.as_str())
            .or_default()
            .push(problem.clone());
    }
    names
        .into_iter()
        .map(|name| {
            let problems = by_name.remove(name.as_str()).unwrap_or_default();
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
    /// The build's "did you mean": the text to write instead.
    pub suggestion: Option<String>,
}

/// The file's problems from the build, each at its range in the file.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn salsa::Database, pack: Pack, file: SourceFile) -> Vec<Diag> {
    let name = file.name(db);
    let text = file.text(db);
    let indexed = file_index(db, file);
    let by_file = pack_problems(db, pack);
    let field_types = |name: &str| declared_field_ty(db, pack, name);
    let places = crate::diagnostics::Places::new(indexed);
    let max = crate::diagnostics::MAX_PER_FILE;
    let mut out = Vec::new();
    let mut left = 0;
    // The file's own entry (after the folder's, in the pack's file order) and, for the manifest,
    // the folder's: found by place, not by a scan of the pack's entries.
    let own = file_position(db, file).and_then(|i| by_file.get(i + 1));
    let folder = by_file.first().filter(|_| name == "pack.yaml");
    let entries: Vec<&FileProblems<'_>> = match own {
        Some(entry) if entry.name(db) == name => folder.into_iter().chain(Some(entry)).collect(),
        _ => by_file.iter().collect(),
    };
    for entry in entries {
        // The folder's own problems show in its manifest.
        let mine = entry.name(db) == name || (entry.name(db).is_empty() && name == "pack.yaml");
        if mine {
            let problems = entry.problems(db);
            let room = max.saturating_sub(out.len());
            out.extend(
                problems
                    .iter()
                    .take(room)
                    .map(|p| crate::diagnostics::place(p, text, indexed, &places, &field_types)),
            );
            left += problems.len().saturating_sub(room);
        }
    }
    if left > 0 {
        out.push(Diag {
            start: 0,
            end: 0,
            error: false,
            suggestion: None,
            code: "too-many-problems".to_owned(),
            message: format!(
                "{left} more problems in this file are not shown (the first {max} are); `ocf check` \
                 lists them all"
            ),
        });
    }
    out
}

/// The pack and every pack it depends on, directly or not, the pack first (nearest first): the
/// packs a formula of `pack` sees.
pub fn scope_of(db: &dyn salsa::Database, pack: Pack) -> Vec<Pack> {
    let mut out = vec![pack];
    let mut i = 0;
    while i < out.len() {
        for dep in out[i].dependencies(db) {
            if !out.contains(dep) {
                out.push(*dep);
            }
        }
        i += 1;
    }
    out
}

/// The declared type of the field a formula of `pack` reads by `name` (a local ID in the pack or
/// its dependencies, nearest first; a qualified one in the pack of that ID), from the files'
/// declarations as written: what a type error's place is found again with.
fn declared_field_ty(db: &dyn salsa::Database, pack: Pack, name: &str) -> Option<ocf_formula::Ty> {
    let (wanted_pack, local) = match name.split_once(':') {
        Some((p, l)) => (Some(p), l),
        None => (None, name),
    };
    let scalar = |file: SourceFile, pointer: &str| {
        file_index(db, file)
            .yaml
            .get(pointer)
            .and_then(|n| n.scalar.clone())
    };
    scope_of(db, pack).into_iter().find_map(|p| {
        let files = p.files(db);
        if let Some(wanted) = wanted_pack
            && crate::world::manifest_id(db, p).as_deref() != Some(wanted)
        {
            return None;
        }
        files.iter().find_map(|&f| {
            let ty = scalar(f, &format!("/fields/{}/type", yaml::escape(local)))?;
            let ty: ocf_model::FieldType = serde_json::from_value(ty.into()).ok()?;
            ocf_load::formulas::field_ty(ty)
        })
    })
}

/// Sets a file's text, when it differs (an unchanged text keeps every memo).
pub fn set_text(db: &mut Database, file: SourceFile, text: String) {
    if file.text(db) != &text {
        file.set_text(db).to(text);
    }
}

/// A pack's declarations by kind and local ID, each with its file.
pub type DeclMap = rustc_hash::FxHashMap<(symbols::Kind, String), Vec<(SourceFile, symbols::Decl)>>;

/// The pack's own declarations by kind and local ID, each with its file, in the pack's file
/// order: a name is resolved without scanning the pack.
#[salsa::tracked(returns(ref))]
pub fn pack_decls(db: &dyn salsa::Database, pack: Pack) -> Arc<DeclMap> {
    let mut out = DeclMap::default();
    for &file in pack.files(db) {
        for decl in &file_index(db, file).symbols.decls {
            out.entry((decl.kind, decl.id.clone()))
                .or_default()
                .push((file, decl.clone()));
        }
    }
    Arc::new(out)
}
