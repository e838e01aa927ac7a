//! The build: a pack source folder (formats.md §1) to a pack release, with every problem the folder
//! has reported at once, each with its file, line, column and JSON pointer.
//!
//! The steps: find the files in path order ([`source`]), read each within the read limits
//! ([`read`], [`locations`]), merge the rules files ([`merge`]), then check what loadRuleset leaves to
//! the build ([`checks`], [`content`]): references, tags, formulas, activation conditions, duplicate
//! IDs and `extends` loops.

mod agreement;
mod checks;
mod content;
mod cycles;
mod expand;
mod limits;
mod locations;
mod manifest;
mod merge;
mod names;
mod problem;
// Public for the language server (ocf-lsp), which reads one file at a time and lists what it uses.
pub mod read;
pub mod source;
pub mod steps;
mod types;
pub mod walk;

use std::path::Path;
use std::sync::Arc;

use ocf_model::{ContentItem, Keyed, PackRelease, RulesDocument, Ruleset};

pub use self::limits::ReadLimits;
pub use self::locations::Locations;
pub use self::problem::{Position, Problem, Severity};

use self::checks::DocumentChecks;
use self::content::Placed;
use self::locations::escape;
use self::merge::RulesFile;
use self::names::{Declarations, Scope};
use self::source::Role;
use self::steps::{FileRead, ReadDocument};

/// What the build is given besides the folder.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Releases of the pack's dependencies. References that may name a declared dependency not given
    /// here are left unchecked (loadRuleset checks them).
    pub dependencies: Vec<PackRelease>,
    pub limits: ReadLimits,
}

/// The build's result: the release when there are no errors, and every problem, errors and
/// warnings, in file order, then line and column.
#[derive(Debug, Clone)]
pub struct BuildReport {
    pub release: Option<PackRelease>,
    pub problems: Vec<Problem>,
    /// The release loaded (loadRuleset of the given dependencies, then the release, with the default
    /// [`crate::LoadOptions`]), when the build made it and loaded it to check that the load agrees:
    /// a caller that would load the same packs has it without loading them again.
    pub loaded: Option<Ruleset>,
}

/// Builds the folder's release, or gives every problem (warnings included) if any is an error.
pub fn build_pack(dir: &Path, options: &BuildOptions) -> Result<PackRelease, Vec<Problem>> {
    let report = build_report(dir, options);
    report.release.ok_or(report.problems)
}

/// Builds the folder: the release (unless there is an error) with the warnings.
#[tracing::instrument(name = "build", level = "info", skip_all, fields(dir = %dir.display()))]
pub fn build_report(dir: &Path, options: &BuildOptions) -> BuildReport {
    let mut problems = Vec::new();
    let files = source::discover(dir, &options.limits, &mut problems);
    let mut total = 0;
    let reads: Vec<FileRead> = files
        .into_iter()
        .map(
            |file| match source::read(&file, &options.limits, &mut total) {
                Ok(text) => FileRead::read(&file.name, file.role, &text, &options.limits),
                Err(problem) => FileRead::unread(&file.name, file.role, problem),
            },
        )
        .collect();
    let reads: Vec<&FileRead> = reads.iter().collect();
    build_reads(&reads, problems, options)
}

/// Builds a pack from its files' texts, named as in a folder (`pack.yaml`, `rules/...`,
/// `content/...`): the same build without the file system, for tests and editors. Other names are
/// ignored.
pub fn build_files(files: &[(String, String)], options: &BuildOptions) -> BuildReport {
    let read = |_: usize, name: &str, role: Role, text: &str| {
        Arc::new(FileRead::read(name, role, text, &options.limits))
    };
    build_files_with(files, options, read)
}

/// [`build_files`], with each file's read step ([`FileRead::read`] of the file's name, role and
/// text, the file given by its index in `files`) made by `read`: a caller that keeps the reads of
/// files whose text did not change gives them again instead of reading them again.
pub fn build_files_with(
    files: &[(String, String)],
    options: &BuildOptions,
    mut read: impl FnMut(usize, &str, Role, &str) -> Arc<FileRead>,
) -> BuildReport {
    let mut sorted: Vec<_> = files
        .iter()
        .enumerate()
        .filter_map(|(index, (name, text))| Some((index, name, source::role_of(name)?, text)))
        .collect();
    sorted.sort_by(|a, b| (a.2, a.1).cmp(&(b.2, b.1)));
    let mut problems = Vec::new();
    if !sorted.iter().any(|(_, _, role, _)| *role == Role::Manifest) {
        problems
            .push(Problem::error("unreadable-file", "the file is missing").in_file("pack.yaml"));
    }
    let mut total = 0;
    let reads: Vec<Arc<FileRead>> = sorted
        .into_iter()
        .map(|(index, name, role, text)| {
            match source::check_size(name, text.len() as u64, &options.limits, &mut total) {
                Ok(()) => read(index, name, role, text),
                Err(problem) => Arc::new(FileRead::unread(name, role, problem)),
            }
        })
        .collect();
    let reads: Vec<&FileRead> = reads.iter().map(|r| &**r).collect();
    build_reads(&reads, problems, options)
}

/// The build of the files read, in path order. Its steps, and the load at its end, share one
/// parse of each formula.
fn build_reads(reads: &[&FileRead], problems: Vec<Problem>, options: &BuildOptions) -> BuildReport {
    crate::parsed::scope(|| build_parsed(reads, problems, options))
}

fn build_parsed(
    reads: &[&FileRead],
    mut problems: Vec<Problem>,
    options: &BuildOptions,
) -> BuildReport {
    let limits = &options.limits;
    let order: Vec<String> = reads.iter().map(|file| file.name.clone()).collect();

    let mut manifest = None;
    let mut rules = Vec::new();
    let mut content = Vec::new();
    let (mut rules_complete, mut content_complete) = (true, true);
    for file in reads {
        let name = file.name.as_str();
        match &file.read {
            Ok(ReadDocument::Manifest(doc, locations)) => {
                manifest = Some((doc.clone(), locations.clone()));
            }
            Ok(ReadDocument::Rules(doc, locations)) => {
                rules.push((name, RulesDocument::clone(doc), locations.clone()));
            }
            Ok(ReadDocument::Content {
                items,
                listed,
                locations,
            }) => content.push((name, items.clone(), *listed, locations.clone())),
            Err(problem) => {
                problems.push((**problem).clone());
                match file.role {
                    Role::Manifest => {}
                    Role::Rules => rules_complete = false,
                    Role::Content => content_complete = false,
                }
            }
        }
    }

    if let Some((manifest, locations)) = &manifest {
        expand::expand(
            (manifest, locations),
            &options.dependencies,
            &mut rules,
            &mut content,
            &mut problems,
        );
    }

    let rules_files: Vec<RulesFile<'_>> = rules
        .iter()
        .map(|(name, doc, locations)| RulesFile {
            name,
            doc,
            locations,
        })
        .collect();
    let (merged, origins, merge_problems) = merge::merge(&rules_files);
    problems.extend(merge_problems);
    let items: Vec<ContentItem> = content
        .iter()
        .flat_map(|(_, items, _, _)| items.iter().cloned())
        .collect();

    let pack = manifest
        .as_ref()
        .map_or(String::new(), |(m, _)| m.id.as_str().to_owned());
    let own = Declarations::of(&pack, &merged, &items);
    let given: Vec<Declarations> = options
        .dependencies
        .iter()
        .map(|dep| Declarations::of(dep.id.as_str(), &dep.rules, &dep.content))
        .collect();
    let declared: Vec<String> = manifest.as_ref().map_or_else(Vec::new, |(m, _)| {
        m.dependencies.iter().map(|(id, _)| id.to_owned()).collect()
    });
    let scope = Scope {
        own: &own,
        given: declared
            .iter()
            .filter_map(|id| given.iter().find(|d| &d.pack == id))
            .collect(),
        missing: declared
            .iter()
            .filter(|id| !given.iter().any(|d| &d.pack == *id))
            .cloned()
            .collect(),
        declared: declared.clone(),
    };
    if let Some((manifest, locations)) = &manifest {
        manifest::check(manifest, locations, &options.dependencies, &mut problems);
        unchecked_dependencies(&scope, &manifest.dependencies, locations, &mut problems);
    }

    let checks = |file, locations| DocumentChecks {
        file,
        locations,
        scope: &scope,
        rules_complete,
        content_complete,
    };
    for (name, doc, locations) in &rules {
        checks(name, locations).run(&walk::rules(doc), &mut problems);
    }
    let mut placed = Vec::new();
    for (name, items, listed, locations) in &content {
        checks(name, locations).run(&walk::content(items, *listed), &mut problems);
        for (index, item) in items.iter().enumerate() {
            placed.push(Placed {
                item,
                file: name,
                locations,
                pointer: if *listed {
                    format!("/{index}")
                } else {
                    String::new()
                },
            });
        }
    }
    content::missing_ids(&pack, &placed, &mut problems);
    content::duplicate_ids(&placed, &mut problems);
    content::extends(&pack, &placed, limits.max_extends_depth, &mut problems);

    // The release as it would be, to type-check its formulas with loadRuleset's checker.
    let (manifest, manifest_locations) = match manifest {
        Some((manifest, locations)) => (Some(manifest), Some(locations)),
        None => (None, None),
    };
    let mut release = manifest.map(|manifest| PackRelease {
        id: manifest.id,
        version: manifest.version,
        spec_version: manifest.spec_version,
        dependencies: manifest.dependencies,
        rules: merged,
        content: items,
    });
    let mut loaded = None;
    if let Some(release) = &release {
        let dependencies: Vec<&PackRelease> = scope
            .given
            .iter()
            .filter_map(|d| {
                options
                    .dependencies
                    .iter()
                    .find(|r| r.id.as_str() == d.pack)
            })
            .collect();
        types::TypeCheck {
            release,
            dependencies: &dependencies,
            origins: &origins,
            rules: rules
                .iter()
                .map(|(file, _, locations)| types::Source {
                    file,
                    locations,
                    prefix: String::new(),
                })
                .collect(),
            content: placed
                .iter()
                .map(|p| types::Source {
                    file: p.file,
                    locations: p.locations,
                    prefix: p.pointer.clone(),
                })
                .collect(),
            names_incomplete: !rules_complete || !scope.missing.is_empty(),
        }
        .run(&mut problems);
        // What loadRuleset would still refuse, when the build has found nothing and could load
        // the pack (every declared dependency given).
        if !problems.iter().any(Problem::is_error) && scope.missing.is_empty() {
            let sources = agreement::Sources {
                origins: &origins,
                rules: rules
                    .iter()
                    .map(|(file, _, locations)| (*file, locations))
                    .collect(),
                content: &placed,
                manifest: manifest_locations.as_ref(),
            };
            let given: Vec<&PackRelease> = options
                .dependencies
                .iter()
                .filter(|d| d.id != release.id)
                .collect();
            loaded = agreement::check(release, &given, &sources, &mut problems);
        }
    }

    sort(&mut problems, &order);
    if problems.iter().any(Problem::is_error) {
        release = None;
        loaded = None;
    }
    BuildReport {
        release,
        problems,
        loaded,
    }
}

/// One warning per declared dependency the build was not given: what may name it is not checked.
fn unchecked_dependencies(
    scope: &Scope<'_>,
    dependencies: &Keyed<ocf_model::VersionRange>,
    locations: &Locations,
    problems: &mut Vec<Problem>,
) {
    for id in &scope.missing {
        if dependencies.get(id).is_none() {
            continue;
        }
        let pointer = format!("/dependencies/{}", escape(id));
        problems.push(
            Problem::warning(
                "unchecked-dependency",
                format!(
                    "the dependency `{id}` was not given: references and tags it may declare are \
                     not checked"
                ),
            )
            .in_file("pack.yaml")
            .at(&pointer, locations.key(&pointer))
            .with("pack", id.as_str()),
        );
    }
}

/// File order (as found), then line, column, then code: the order a reader goes through the files.
fn sort(problems: &mut [Problem], order: &[String]) {
    let ranks: rustc_hash::FxHashMap<&str, usize> = order
        .iter()
        .enumerate()
        .rev()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let rank = |file: &str| ranks.get(file).copied().unwrap_or(usize::MAX);
    problems.sort_by_cached_key(|p| (rank(&p.file), p.line, p.column, p.code.clone()));
}
