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
mod item_fields;
mod limits;
mod locations;
mod manifest;
mod merge;
mod names;
mod plain;
mod problem;
mod self_keys;
// Public for the language server (ocf-lsp), which reads one file at a time and lists what it uses.
pub mod read;
pub mod source;
pub mod steps;
pub mod texts;
mod types;
pub mod walk;

use std::path::Path;
use std::sync::Arc;

use ocf_model::{ContentItem, Keyed, PackRelease, Ruleset};

pub use self::limits::ReadLimits;
pub use self::locations::Locations;
pub use self::problem::{Position, Problem, Severity};

use self::content::Placed;
use self::locations::escape;
use self::merge::RulesFile;
use self::names::Scope;
use self::source::Role;
use self::steps::{Direct, ExpandedFile, FileRead, ReadDocument, Steps};

/// What the build is given besides the folder.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Releases of the pack's dependencies. References that may name a declared dependency not given
    /// here are left unchecked (loadRuleset checks them).
    pub dependencies: Vec<PackRelease>,
    pub limits: ReadLimits,
    /// The IDs of given dependencies whose own builds have errors (given as drafted, see
    /// [`BuildReport::draft`]): the pack is still checked against them, with a
    /// `dependency-has-errors` warning on each.
    pub with_errors: Vec<String>,
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
    /// The release as drafted when the build has errors (when the manifest read): what the packs
    /// depending on this one are checked against meanwhile, so that an error here does not hide
    /// theirs.
    pub draft: Option<PackRelease>,
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
    let reads: Vec<Arc<FileRead>> = files
        .into_iter()
        .map(|file| {
            Arc::new(match source::read(&file, &options.limits, &mut total) {
                Ok(text) => FileRead::read(&file.name, file.role, &text, &options.limits),
                Err(problem) => FileRead::unread(&file.name, file.role, problem),
            })
        })
        .collect();
    let count = reads.len();
    let mut steps = Direct::new(reads, &options.dependencies);
    build_steps(count, problems, &mut steps, options)
}

/// Builds a pack from its files' texts, named as in a folder (`pack.yaml`, `rules/...`,
/// `content/...`): the same build without the file system, for tests and editors. Other names are
/// ignored.
pub fn build_files(files: &[(String, String)], options: &BuildOptions) -> BuildReport {
    let sizes: Vec<(&str, u64)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.len() as u64))
        .collect();
    let layout = Layout::of(&sizes, &options.limits);
    let reads = layout
        .files
        .iter()
        .map(|file| {
            Arc::new(match &file.too_large {
                Some(problem) => FileRead::unread(&file.name, file.role, problem.clone()),
                None => {
                    FileRead::read(&file.name, file.role, &files[file.index].1, &options.limits)
                }
            })
        })
        .collect();
    let mut steps = Direct::new(reads, &options.dependencies);
    build_steps(layout.files.len(), layout.problems, &mut steps, options)
}

/// The files of a pack given by name and size: those the build reads, in path order, each with
/// the size limit's problem when it is over it, and the folder's own problems.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub files: Vec<LaidOut>,
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LaidOut {
    /// The file's index in the files given.
    pub index: usize,
    pub name: String,
    pub role: Role,
    /// `safety-limit-exceeded`: the file is not read.
    pub too_large: Option<Box<Problem>>,
}

impl Layout {
    pub fn of(files: &[(&str, u64)], limits: &ReadLimits) -> Layout {
        let mut sorted: Vec<_> = files
            .iter()
            .enumerate()
            .filter_map(|(index, (name, size))| Some((index, *name, source::role_of(name)?, *size)))
            .collect();
        sorted.sort_by(|a, b| (a.2, a.1).cmp(&(b.2, b.1)));
        let mut problems = Vec::new();
        if !sorted.iter().any(|(_, _, role, _)| *role == Role::Manifest) {
            problems.push(
                Problem::error("unreadable-file", "the file is missing").in_file("pack.yaml"),
            );
        }
        let mut total = 0;
        let files = sorted
            .into_iter()
            .map(|(index, name, role, size)| LaidOut {
                index,
                name: name.to_owned(),
                role,
                too_large: source::check_size(name, size, limits, &mut total).err(),
            })
            .collect();
        Layout { files, problems }
    }
}

/// The build of `count` files (in path order) whose steps `steps` gives. Its steps, and the load
/// at its end, share one parse of each formula.
pub fn build_steps(
    count: usize,
    problems: Vec<Problem>,
    steps: &mut dyn Steps,
    options: &BuildOptions,
) -> BuildReport {
    crate::parsed::scope(|| build_parsed(count, problems, steps, options))
}

fn build_parsed(
    count: usize,
    mut problems: Vec<Problem>,
    steps: &mut dyn Steps,
    options: &BuildOptions,
) -> BuildReport {
    let limits = &options.limits;
    let reads: Vec<Arc<FileRead>> = (0..count).map(|i| steps.read(i)).collect();
    let order: Vec<String> = reads.iter().map(|file| file.name.clone()).collect();

    let mut manifest = None;
    for file in &reads {
        match &file.read {
            Ok(ReadDocument::Manifest(doc, locations)) => manifest = Some((doc, locations)),
            Ok(_) => {}
            Err(problem) => problems.push((**problem).clone()),
        }
    }

    problems.extend(steps.families().problems.iter().cloned());
    let expanded: Vec<Arc<ExpandedFile>> = (0..count).map(|i| steps.expanded(i)).collect();
    let mut rules = Vec::new();
    let mut content = Vec::new();
    for file in &expanded {
        problems.extend(file.problems.iter().cloned());
        match &file.doc {
            Some(ReadDocument::Rules(doc, locations)) => {
                rules.push((file.name.as_str(), &**doc, locations))
            }
            Some(ReadDocument::Content {
                items,
                listed,
                locations,
            }) => content.push((file.name.as_str(), items, *listed, locations)),
            _ => {}
        }
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

    let pack = manifest.map_or(String::new(), |(m, _)| m.id.as_str().to_owned());
    let pack_scope = steps.scope();
    let scope = pack_scope.scope();
    if let Some((manifest, locations)) = manifest {
        manifest::check(manifest, locations, &options.dependencies, &mut problems);
        unchecked_dependencies(&scope, &manifest.dependencies, locations, &mut problems);
    }

    for file in 0..count {
        problems.extend(steps.checks(file).iter().cloned());
    }
    let mut placed = Vec::new();
    for (name, items, listed, locations) in &content {
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
    let manifest_locations = manifest.map(|(_, locations)| locations);
    let mut release = manifest.map(|(manifest, _)| PackRelease {
        id: manifest.id.clone(),
        version: manifest.version.clone(),
        spec_version: manifest.spec_version.clone(),
        dependencies: manifest.dependencies.clone(),
        rules: merged,
        content: items,
        default_locale: manifest.default_locale.clone(),
        texts: Default::default(),
    });
    // The translation files: gathered by locale, then checked against the release's declarations
    // and its given dependencies'.
    let text_files: Vec<texts::TextSource<'_>> = reads
        .iter()
        .filter_map(|file| match &file.read {
            Ok(ReadDocument::Texts(texts, locations)) => Some(texts::TextSource {
                file: &file.name,
                texts,
                locations,
            }),
            _ => None,
        })
        .collect();
    if let Some(release) = &mut release {
        release.texts = texts::gather(&text_files, &mut problems);
        if let Some(locale) = &release.default_locale
            && !ocf_model::text::valid_locale(locale)
        {
            let pointer = "/defaultLocale";
            problems.push(
                Problem::error(
                    "invalid-locale",
                    format!("`{locale}` is not a BCP 47 locale tag"),
                )
                .in_file("pack.yaml")
                .at(pointer, manifest_locations.and_then(|l| l.value(pointer))),
            );
        }
        let given: Vec<&PackRelease> = options.dependencies.iter().collect();
        let locate = |declared: &texts::Declared| -> Option<texts::Located> {
            match declared {
                texts::Declared::Rules(pointer) => {
                    let (index, there) = origins.locate(pointer)?;
                    let (file, _, locations) = rules.get(index)?;
                    Some(((*file).to_owned(), locations.key(&there), there))
                }
                texts::Declared::Content(index, pointer) => placed.get(*index).map(|p| {
                    let pointer = format!("{}{pointer}", p.pointer);
                    (p.file.to_owned(), p.locations.key(&pointer), pointer)
                }),
            }
        };
        texts::check(release, &given, &text_files, &locate, &mut problems);
    }
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
        // Item field values against their declarations, when every declaration is in sight.
        if pack_scope.rules_complete && scope.missing.is_empty() {
            item_fields::check(release, &dependencies, &placed, &mut problems);
        }
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
            names_incomplete: !pack_scope.rules_complete || !scope.missing.is_empty(),
        }
        .run(&mut problems);
        // What loadRuleset would still refuse, when the build has found nothing and could load
        // the pack (every declared dependency given).
        if !problems.iter().any(Problem::is_error) && scope.missing.is_empty() {
            let sources = agreement::Sources {
                origins: &origins,
                rules: rules
                    .iter()
                    .map(|(file, _, locations)| (*file, *locations))
                    .collect(),
                content: &placed,
                manifest: manifest_locations,
            };
            let given: Vec<&PackRelease> = options
                .dependencies
                .iter()
                .filter(|d| d.id != release.id)
                .collect();
            loaded = agreement::check(release, &given, &sources, &mut problems);
        }
    }

    if let Some((manifest, locations)) = manifest {
        dependencies_with_errors(manifest, locations, options, &mut problems);
    }
    sort(&mut problems, &order);
    let mut draft = None;
    if problems.iter().any(Problem::is_error) {
        draft = release.take();
        loaded = None;
    }
    BuildReport {
        release,
        problems,
        loaded,
        draft,
    }
}

/// One warning per declared dependency given as drafted by a build with errors: the pack is
/// checked against the draft, and may pass once the dependency's errors are mended.
fn dependencies_with_errors(
    manifest: &ocf_model::PackManifest,
    locations: &Locations,
    options: &BuildOptions,
    problems: &mut Vec<Problem>,
) {
    for id in &options.with_errors {
        if manifest.dependencies.get(id).is_none() {
            continue;
        }
        let pointer = format!("/dependencies/{}", escape(id));
        problems.push(
            Problem::warning(
                "dependency-has-errors",
                format!(
                    "the dependency `{id}` has errors (see its own problems): this pack is checked \
                     against it as written"
                ),
            )
            .in_file("pack.yaml")
            .at(&pointer, locations.key(&pointer))
            .with("pack", id.as_str()),
        );
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
