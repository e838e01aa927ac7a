//! The workspace: the packs the server knows (the workspace folders' packs, found by their
//! `pack.yaml`, the packs of files the editor opens, and the dependencies of each, found among
//! the known packs or beside the pack's folder, as `testdata/packs/<id>` sit side by side), each
//! file's salsa input, and which files the editor has open.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ocf_load::build::ReadLimits;
use ocf_load::build::source::{self, role_of};
use rustc_hash::{FxHashMap, FxHashSet};
use salsa::Setter;

use crate::db::{self, Database, Pack, SourceFile};

/// How deep under a workspace folder packs are looked for, and how many are taken: a workspace
/// opened on `/` must not read the disk.
const MAX_SEARCH_DEPTH: usize = 4;
const MAX_PACKS: usize = 64;
const MAX_FOLDERS_SEARCHED: usize = 4096;

pub struct World {
    pub db: Database,
    packs: BTreeMap<PathBuf, Pack>,
    /// Each known file: its pack and input.
    files: BTreeMap<PathBuf, (Pack, SourceFile)>,
    /// Each file's path, by its input.
    paths: FxHashMap<SourceFile, PathBuf>,
    pub open: BTreeSet<PathBuf>,
}

impl World {
    pub fn new(db: Database) -> World {
        World {
            db,
            packs: BTreeMap::new(),
            files: BTreeMap::new(),
            paths: FxHashMap::default(),
            open: BTreeSet::new(),
        }
    }

    /// Loads the packs under a workspace folder.
    pub fn add_folder(&mut self, dir: &Path) {
        let mut found = Vec::new();
        let mut budget = MAX_FOLDERS_SEARCHED;
        find_packs(dir, 0, &mut budget, &mut found);
        for root in found {
            self.load_pack(&root);
        }
        self.resolve_dependencies();
    }

    pub fn packs(&self) -> impl Iterator<Item = Pack> + '_ {
        self.packs.values().copied()
    }

    /// The pack folder holding `path` (the nearest ancestor with a `pack.yaml`).
    fn root_of(path: &Path) -> Option<PathBuf> {
        path.ancestors()
            .skip(1)
            .take(16)
            .find(|dir| dir.join("pack.yaml").is_file())
            .map(Path::to_path_buf)
    }

    /// Loads a pack folder's files, once.
    pub fn load_pack(&mut self, root: &Path) -> Option<Pack> {
        if let Some(pack) = self.packs.get(root) {
            return Some(*pack);
        }
        if self.packs.len() >= MAX_PACKS {
            return None;
        }
        let limits = ReadLimits::default();
        let mut problems = Vec::new();
        let found = source::discover(root, &limits, &mut problems);
        let mut total = 0;
        let pack = Pack::new(&self.db, root.to_path_buf(), Vec::new(), Vec::new());
        let mut files = Vec::new();
        for file in found {
            // An unreadable file is the build's to report; the server sees it as empty.
            let text = source::read(&file, &limits, &mut total).unwrap_or_default();
            let input = SourceFile::new(&self.db, file.name.clone(), text, pack);
            self.files.insert(file.path.clone(), (pack, input));
            self.paths.insert(input, file.path.clone());
            files.push(input);
        }
        pack.set_files(&mut self.db).to(files);
        self.packs.insert(root.to_path_buf(), pack);
        Some(pack)
    }

    /// A pack from texts, named as in a folder, under `root` (for tests and benchmarks: nothing is
    /// read from disk).
    pub fn add_pack_texts(&mut self, root: &Path, files: Vec<(String, String)>) -> Pack {
        let pack = Pack::new(&self.db, root.to_path_buf(), Vec::new(), Vec::new());
        let inputs = files
            .into_iter()
            .map(|(name, text)| {
                let path = root.join(&name);
                let input = SourceFile::new(&self.db, name, text, pack);
                self.paths.insert(input, path.clone());
                self.files.insert(path, (pack, input));
                input
            })
            .collect();
        pack.set_files(&mut self.db).to(inputs);
        self.packs.insert(root.to_path_buf(), pack);
        self.resolve_dependencies();
        pack
    }

    /// The file's pack and input, loading its pack if the file is in one the server does not
    /// know, and adding the file to its pack if it is new.
    pub fn file(&mut self, path: &Path) -> Option<(Pack, SourceFile)> {
        if let Some(found) = self.files.get(path) {
            return Some(*found);
        }
        let root = World::root_of(path)?;
        let pack = self.load_pack(&root)?;
        self.resolve_dependencies();
        if let Some(found) = self.files.get(path) {
            return Some(*found);
        }
        let name = path
            .strip_prefix(&root)
            .ok()?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        role_of(&name)?;
        let input = SourceFile::new(&self.db, name, String::new(), pack);
        let mut files = pack.files(&self.db).clone();
        files.push(input);
        pack.set_files(&mut self.db).to(files);
        self.files.insert(path.to_path_buf(), (pack, input));
        self.paths.insert(input, path.to_path_buf());
        Some((pack, input))
    }

    /// Sets a file's text (from the editor, or from disk when it closes).
    pub fn set_text(&mut self, path: &Path, text: String) -> Option<(Pack, SourceFile)> {
        let (pack, file) = self.file(path)?;
        db::set_text(&mut self.db, file, text);
        if file.name(&self.db) == "pack.yaml" {
            self.resolve_dependencies();
        }
        Some((pack, file))
    }

    /// Takes a deleted file out of its pack; gives the pack.
    pub fn remove(&mut self, path: &Path) -> Option<Pack> {
        let (pack, file) = self.files.remove(path)?;
        self.paths.remove(&file);
        let files: Vec<SourceFile> = pack
            .files(&self.db)
            .iter()
            .copied()
            .filter(|f| *f != file)
            .collect();
        let manifest = file.name(&self.db) == "pack.yaml";
        pack.set_files(&mut self.db).to(files);
        if manifest {
            self.resolve_dependencies();
        }
        Some(pack)
    }

    pub fn path_of(&self, file: SourceFile) -> Option<&Path> {
        self.paths.get(&file).map(PathBuf::as_path)
    }

    /// The pack's ID, from its manifest.
    pub fn pack_id(&self, pack: Pack) -> Option<String> {
        manifest_id(&self.db, pack)
    }

    /// The packs whose releases a pack's build is given: each declared dependency found among the
    /// known packs, else in a folder beside the pack. A dependency that would close a loop is left
    /// out (the build then reports it as not given).
    pub fn resolve_dependencies(&mut self) {
        // Dependencies beside each pack, loaded first so they are known by ID.
        let roots: Vec<PathBuf> = self.packs.keys().cloned().collect();
        for root in &roots {
            let pack = self.packs[root];
            for id in declared(&self.db, pack) {
                if self.by_id(&id).is_none()
                    && let Some(parent) = root.parent()
                    && let Some(dir) = find_beside(parent, &id)
                {
                    self.load_pack(&dir);
                }
            }
        }
        let packs: Vec<Pack> = self.packs.values().copied().collect();
        let mut edges: FxHashMap<Pack, Vec<Pack>> = FxHashMap::default();
        for &pack in &packs {
            let deps = declared(&self.db, pack)
                .into_iter()
                .filter_map(|id| self.by_id(&id))
                .filter(|d| *d != pack)
                .collect();
            edges.insert(pack, deps);
        }
        // Drop the edges that close a loop, in a fixed order.
        let mut kept: FxHashMap<Pack, Vec<Pack>> = FxHashMap::default();
        for &pack in &packs {
            let mut deps = Vec::new();
            for &dep in &edges[&pack] {
                if !reaches(&kept, dep, pack) {
                    deps.push(dep);
                }
            }
            kept.insert(pack, deps);
        }
        for (pack, deps) in kept {
            if pack.dependencies(&self.db) != &deps {
                pack.set_dependencies(&mut self.db).to(deps);
            }
        }
    }

    pub fn by_id(&self, id: &str) -> Option<Pack> {
        self.packs
            .values()
            .copied()
            .find(|p| manifest_id(&self.db, *p).as_deref() == Some(id))
    }

    /// The pack and every pack it depends on, directly or not, the pack first.
    pub fn scope(&self, pack: Pack) -> Vec<Pack> {
        db::scope_of(&self.db, pack)
    }

    /// The packs that depend on `pack`, directly or not, and the pack.
    pub fn dependents(&self, pack: Pack) -> Vec<Pack> {
        self.packs()
            .filter(|p| self.scope(*p).contains(&pack))
            .collect()
    }

    pub fn manifest(&self, pack: Pack) -> Option<SourceFile> {
        pack.files(&self.db)
            .iter()
            .copied()
            .find(|f| f.name(&self.db) == "pack.yaml")
    }
}

fn reaches(edges: &FxHashMap<Pack, Vec<Pack>>, from: Pack, to: Pack) -> bool {
    let mut stack = vec![from];
    let mut seen = FxHashSet::default();
    while let Some(p) = stack.pop() {
        if p == to {
            return true;
        }
        if seen.insert(p) {
            stack.extend(edges.get(&p).into_iter().flatten().copied());
        }
    }
    false
}

fn manifest_file(db: &dyn salsa::Database, pack: Pack) -> Option<SourceFile> {
    pack.files(db)
        .iter()
        .copied()
        .find(|f| f.name(db) == "pack.yaml")
}

/// The manifest's `id`, read from its index (a half-typed manifest still has one).
pub fn manifest_id(db: &dyn salsa::Database, pack: Pack) -> Option<String> {
    let file = manifest_file(db, pack)?;
    db::file_index(db, file).yaml.get("/id")?.scalar.clone()
}

/// The IDs under the manifest's `dependencies`.
fn declared(db: &Database, pack: Pack) -> Vec<String> {
    let Some(file) = manifest_file(db, pack) else {
        return Vec::new();
    };
    db::file_index(db, file)
        .yaml
        .nodes
        .iter()
        .filter_map(|n| {
            let rest = n.pointer.strip_prefix("/dependencies/")?;
            (!rest.contains('/')).then(|| crate::yaml::unescape(rest))
        })
        .collect()
}

/// A folder in `parent` whose manifest's ID is `id`: `parent/id` first, then the others.
fn find_beside(parent: &Path, id: &str) -> Option<PathBuf> {
    let named = parent.join(id);
    if named.join("pack.yaml").is_file() && read_id(&named).as_deref() == Some(id) {
        return Some(named);
    }
    let entries = std::fs::read_dir(parent).ok()?;
    entries
        .filter_map(Result::ok)
        .take(256)
        .map(|e| e.path())
        .find(|dir| dir.join("pack.yaml").is_file() && read_id(dir).as_deref() == Some(id))
}

fn read_id(dir: &Path) -> Option<String> {
    let bytes = source::read_bounded(&dir.join("pack.yaml"), "pack.yaml", 1 << 20).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    crate::yaml::index(&text, 64).get("/id")?.scalar.clone()
}

fn find_packs(dir: &Path, depth: usize, budget: &mut usize, out: &mut Vec<PathBuf>) {
    if out.len() >= MAX_PACKS || depth > MAX_SEARCH_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    if dir.join("pack.yaml").is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.') || n == "target")
        })
        .collect();
    dirs.sort();
    for sub in dirs {
        find_packs(&sub, depth + 1, budget, out);
    }
}
