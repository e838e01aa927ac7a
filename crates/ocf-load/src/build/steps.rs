//! The build's steps, for a caller that keeps them between builds (the language server memoizes
//! each in its salsa database, split by what it reads):
//!
//! - reading one file ([`FileRead`]): its own text;
//! - the pack's families ([`Families`]): the manifest and the rules files' `families` and
//!   `viewFields`, and the given dependencies;
//! - expanding one file and walking it ([`ExpandedFile`]): its read, the families, and the
//!   expansion budget the files before it spent;
//! - what one file declares ([`FileDeclared`]): its expansion; and the pack's scope
//!   ([`PackScope`]): what every file declares, and the dependencies;
//! - one file's document checks (references, tags, formulas' syntax and activation reads):
//!   its expansion and the scope.
//!
//! The rest of the build ([`super::build_steps`]: merge, content checks, the formula type check
//! and loadRuleset's agreement) reads every file's expansion. A build given the same steps is the
//! build of the same texts, problem for problem: `ocf check` makes them with [`Direct`].

use std::sync::Arc;

use ocf_model::{ContentFile, ContentItem, PackManifest, PackRelease, RulesDocument};

use super::checks::DocumentChecks;
pub use super::expand::Families;
use super::limits::ReadLimits;
use super::locations::Locations;
pub use super::names::Declared;
use super::names::{Declarations, Scope};
use super::problem::Problem;
use super::read;
use super::source::Role;
use super::walk::{self, Uses};
use crate::families::Budget;

/// One file read: its typed document and positions, or the problem that stopped the read
/// (`unreadable-file`, `file-too-large`, `invalid-yaml`, `unknown-key`, ...).
#[derive(Debug, Clone)]
pub struct FileRead {
    pub name: String,
    pub role: Role,
    pub read: Result<ReadDocument, Box<Problem>>,
}

/// A file's document, by its role.
#[derive(Debug, Clone)]
pub enum ReadDocument {
    Manifest(PackManifest, Locations),
    /// Boxed: a rules document is much larger than the other variants.
    Rules(Box<RulesDocument>, Locations),
    /// A content file's items; `listed` when the file is a list of items rather than one item
    /// (its items' pointers then start with their index).
    Content {
        items: Vec<ContentItem>,
        listed: bool,
        locations: Locations,
    },
    /// A translation file: key to message.
    Texts(ocf_model::text::TextFile, Locations),
}

impl FileRead {
    /// Reads `text`, the file `name` with `role`, within the read limits.
    pub fn read(name: &str, role: Role, text: &str, limits: &ReadLimits) -> FileRead {
        let read = match role {
            Role::Manifest => read::document::<PackManifest>(text, name, limits)
                .map(|doc| ReadDocument::Manifest(doc.value, doc.locations)),
            Role::Rules => read::document::<RulesDocument>(text, name, limits)
                .map(|doc| ReadDocument::Rules(Box::new(doc.value), doc.locations)),
            Role::Content => read::document::<ContentFile>(text, name, limits).map(|doc| {
                let listed = matches!(doc.value, ContentFile::Many(_));
                ReadDocument::Content {
                    items: doc.value.into_items(),
                    listed,
                    locations: doc.locations,
                }
            }),
            Role::Texts => read::document::<ocf_model::text::TextFile>(text, name, limits)
                .map(|doc| ReadDocument::Texts(doc.value, doc.locations)),
        };
        FileRead {
            name: name.to_owned(),
            role,
            read,
        }
    }

    /// A file that could not be read at all (missing, too large): its problem.
    pub fn unread(name: &str, role: Role, problem: Box<Problem>) -> FileRead {
        FileRead {
            name: name.to_owned(),
            role,
            read: Err(problem),
        }
    }
}

/// A pack's families, from its files' reads (in path order) and its given dependencies.
pub fn families(reads: &[&FileRead], dependencies: &[PackRelease]) -> Families {
    let mut manifest = None;
    let mut rules = Vec::new();
    for file in reads {
        match &file.read {
            Ok(ReadDocument::Manifest(doc, locations)) => manifest = Some((doc, locations)),
            Ok(ReadDocument::Rules(doc, locations)) => {
                rules.push((file.name.as_str(), &**doc, locations))
            }
            _ => {}
        }
    }
    Families::of(manifest, dependencies, &rules)
}

/// One rules or content file after family expansion, and what its document uses (the walk the
/// checks read).
#[derive(Debug)]
pub struct ExpandedFile {
    pub name: String,
    pub role: Role,
    /// The expanded document; `None` for the manifest and a file that was not read.
    pub doc: Option<ReadDocument>,
    /// The expansion's problems (`invalid-family`, ...).
    pub problems: Vec<Problem>,
    /// The expansion budget the pack's files up to this one spent.
    pub spent: usize,
    pub uses: Uses,
}

/// Expands the file read as `read` with the pack's families, after files that spent `spent` of
/// the pack's expansion budget.
pub fn expand(read: &FileRead, families: &Families, spent: usize) -> ExpandedFile {
    let budget = Budget::spent(spent);
    let mut problems = Vec::new();
    let name = read.name.as_str();
    let doc = match &read.read {
        Ok(ReadDocument::Rules(doc, locations)) => {
            let (mut doc, mut locations) = (RulesDocument::clone(doc), locations.clone());
            families.expand_rules((name, &mut doc, &mut locations), &budget, &mut problems);
            Some(ReadDocument::Rules(Box::new(doc), locations))
        }
        Ok(ReadDocument::Content {
            items,
            listed,
            locations,
        }) => {
            let (mut items, mut listed, mut locations) =
                (items.clone(), *listed, locations.clone());
            families.expand_content(
                (name, &mut items, &mut listed, &mut locations),
                &budget,
                &mut problems,
            );
            Some(ReadDocument::Content {
                items,
                listed,
                locations,
            })
        }
        Ok(ReadDocument::Manifest(..) | ReadDocument::Texts(..)) | Err(_) => None,
    };
    let uses = match &doc {
        Some(ReadDocument::Rules(doc, _)) => walk::rules(doc),
        Some(ReadDocument::Content { items, listed, .. }) => walk::content(items, *listed),
        _ => Uses::default(),
    };
    ExpandedFile {
        name: read.name.clone(),
        role: read.role,
        doc,
        problems,
        spent: budget.used(),
        uses,
    }
}

/// What one file declares: a manifest its pack's ID and declared dependencies, a rules or content
/// file its expanded document's declarations; and whether it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDeclared {
    pub role: Role,
    pub read: bool,
    pub manifest: Option<(String, Vec<String>)>,
    pub declared: Declared,
}

pub fn declared(read: &FileRead, expanded: &ExpandedFile) -> FileDeclared {
    let manifest = match &read.read {
        Ok(ReadDocument::Manifest(manifest, _)) => Some((
            manifest.id.as_str().to_owned(),
            manifest
                .dependencies
                .iter()
                .map(|(id, _)| id.to_owned())
                .collect(),
        )),
        _ => None,
    };
    let declared = match &expanded.doc {
        Some(ReadDocument::Rules(doc, _)) => Declared::rules(doc),
        Some(ReadDocument::Content { items, .. }) => Declared::content(items),
        _ => Declared::default(),
    };
    FileDeclared {
        role: read.role,
        read: read.read.is_ok(),
        manifest,
        declared,
    }
}

/// Where the pack's references resolve: its own declarations and its given dependencies', and
/// whether every rules file and every content file was read.
#[derive(Debug, PartialEq, Eq)]
pub struct PackScope {
    own: Declarations,
    given: Vec<Declarations>,
    missing: Vec<String>,
    declared: Vec<String>,
    pub rules_complete: bool,
    pub content_complete: bool,
}

impl PackScope {
    /// The scope of the pack whose files declare `files` (in path order), with `dependencies`
    /// given.
    pub fn of(files: &[&FileDeclared], dependencies: &[PackRelease]) -> PackScope {
        let manifest = files.iter().find_map(|f| f.manifest.as_ref());
        let (pack, declared) = match manifest {
            Some((pack, declared)) => (pack.as_str(), declared.clone()),
            None => ("", Vec::new()),
        };
        let own = Declarations::combine(pack, files.iter().map(|f| &f.declared));
        let given = declared
            .iter()
            .filter_map(|id| dependencies.iter().find(|d| d.id.as_str() == id))
            .map(|dep| Declarations::of(dep.id.as_str(), &dep.rules, &dep.content))
            .collect();
        let missing = declared
            .iter()
            .filter(|id| !dependencies.iter().any(|d| d.id.as_str() == id.as_str()))
            .cloned()
            .collect();
        let complete = |role: Role| files.iter().all(|f| f.role != role || f.read);
        PackScope {
            own,
            given,
            missing,
            declared,
            rules_complete: complete(Role::Rules),
            content_complete: complete(Role::Content),
        }
    }

    pub(super) fn scope(&self) -> Scope<'_> {
        Scope {
            own: &self.own,
            given: self.given.iter().collect(),
            missing: self.missing.clone(),
            declared: self.declared.clone(),
        }
    }
}

/// One file's document checks: its references resolve and its tags are declared in the scope,
/// its formulas parse, its activation conditions read input fields only.
pub fn checks(expanded: &ExpandedFile, scope: &PackScope) -> Vec<Problem> {
    let locations = match &expanded.doc {
        Some(ReadDocument::Rules(_, locations)) => locations,
        Some(ReadDocument::Content { locations, .. }) => locations,
        _ => return Vec::new(),
    };
    let mut problems = Vec::new();
    DocumentChecks {
        file: &expanded.name,
        locations,
        scope: &scope.scope(),
        rules_complete: scope.rules_complete,
        content_complete: scope.content_complete,
    }
    .run(&expanded.uses, &mut problems);
    problems
}

/// The build's steps as a caller gives them, each file by its index in path order.
pub trait Steps {
    fn read(&mut self, file: usize) -> Arc<FileRead>;
    fn families(&mut self) -> Arc<Families>;
    fn expanded(&mut self, file: usize) -> Arc<ExpandedFile>;
    fn scope(&mut self) -> Arc<PackScope>;
    fn checks(&mut self, file: usize) -> Arc<Vec<Problem>>;
}

/// Each step made when the build asks for it, once: the build of `ocf check`.
pub struct Direct<'a> {
    reads: Vec<Arc<FileRead>>,
    dependencies: &'a [PackRelease],
    families: Option<Arc<Families>>,
    expanded: Vec<Arc<ExpandedFile>>,
    scope: Option<Arc<PackScope>>,
}

impl<'a> Direct<'a> {
    /// The steps of the files read as `reads` (in path order).
    pub fn new(reads: Vec<Arc<FileRead>>, dependencies: &'a [PackRelease]) -> Direct<'a> {
        Direct {
            reads,
            dependencies,
            families: None,
            expanded: Vec::new(),
            scope: None,
        }
    }
}

impl Steps for Direct<'_> {
    fn read(&mut self, file: usize) -> Arc<FileRead> {
        self.reads[file].clone()
    }

    fn families(&mut self) -> Arc<Families> {
        if self.families.is_none() {
            let reads: Vec<&FileRead> = self.reads.iter().map(|r| &**r).collect();
            self.families = Some(Arc::new(families(&reads, self.dependencies)));
        }
        self.families.clone().unwrap_or_default()
    }

    fn expanded(&mut self, file: usize) -> Arc<ExpandedFile> {
        let families = self.families();
        // In path order: each file's expansion starts from the budget the ones before it spent.
        while self.expanded.len() <= file {
            let spent = self.expanded.last().map_or(0, |e| e.spent);
            let read = &self.reads[self.expanded.len()];
            self.expanded.push(Arc::new(expand(read, &families, spent)));
        }
        self.expanded[file].clone()
    }

    fn scope(&mut self) -> Arc<PackScope> {
        if self.scope.is_none() {
            let declared: Vec<FileDeclared> = (0..self.reads.len())
                .map(|i| declared(&self.reads[i].clone(), &self.expanded(i)))
                .collect();
            let declared: Vec<&FileDeclared> = declared.iter().collect();
            self.scope = Some(Arc::new(PackScope::of(&declared, self.dependencies)));
        }
        self.scope.clone().expect("made above")
    }

    fn checks(&mut self, file: usize) -> Arc<Vec<Problem>> {
        let scope = self.scope();
        Arc::new(checks(&self.expanded(file), &scope))
    }
}
