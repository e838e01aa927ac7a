//! Finding and reading a pack source folder's files: `pack.yaml`, `rules/**/*.yaml`,
//! `content/**/*.yaml` and `i18n/**/*.yaml`, in path order, within the read limits.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::limits::ReadLimits;
use super::problem::{Position, Problem};

/// What a source file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Manifest,
    Rules,
    Content,
    /// A translation file: `i18n/<locale>.yaml` or `i18n/<locale>/**/*.yaml` (i18n.md).
    Texts,
}

/// What a file named as in a folder holds, if the build reads it.
pub fn role_of(name: &str) -> Option<Role> {
    if name == "pack.yaml" {
        Some(Role::Manifest)
    } else if name.ends_with(".yaml") {
        if name.starts_with("rules/") {
            Some(Role::Rules)
        } else if name.starts_with("content/") {
            Some(Role::Content)
        } else if name.starts_with("i18n/") {
            Some(Role::Texts)
        } else {
            None
        }
    } else {
        None
    }
}

/// A source file found in the folder, not yet read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub role: Role,
    /// Relative to the folder, `/`-separated: how problems name it, and the sort key.
    pub name: String,
    pub path: PathBuf,
}

/// The folder's files: `pack.yaml`, then `rules/` and `content/` each in path order (the byte order of
/// the `/`-separated relative paths, so the order is the same on every system).
pub fn discover(dir: &Path, limits: &ReadLimits, problems: &mut Vec<Problem>) -> Vec<SourceFile> {
    let mut files = vec![SourceFile {
        role: Role::Manifest,
        name: "pack.yaml".to_owned(),
        path: dir.join("pack.yaml"),
    }];
    for (folder, role) in [
        ("rules", Role::Rules),
        ("content", Role::Content),
        ("i18n", Role::Texts),
    ] {
        let mut found = Vec::new();
        let root = dir.join(folder);
        if root.is_dir() {
            walk(&root, folder, 0, limits, &mut found, problems);
        }
        found.sort();
        files.extend(
            found
                .into_iter()
                .map(|(name, path)| SourceFile { role, name, path }),
        );
    }
    if files.len() > limits.max_files {
        problems.push(
            Problem::error(
                "safety-limit-exceeded",
                format!(
                    "the folder has {} source files, more than {}",
                    files.len(),
                    limits.max_files
                ),
            )
            .with("limit", "maxFiles"),
        );
        files.truncate(limits.max_files);
    }
    files
}

/// Collects `*.yaml` files under `dir` (named `prefix/...`). Symbolic links to folders are not
/// followed, so a link loop can't make the walk endless.
fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    limits: &ReadLimits,
    found: &mut Vec<(String, PathBuf)>,
    problems: &mut Vec<Problem>,
) {
    if depth > limits.max_folder_depth {
        problems.push(
            Problem::error(
                "safety-limit-exceeded",
                format!(
                    "folders nest more than {} deep; `{prefix}` is not read",
                    limits.max_folder_depth
                ),
            )
            .in_file(prefix)
            .with("limit", "maxFolderDepth"),
        );
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            problems.push(Problem::error("unreadable-file", error.to_string()).in_file(prefix));
            return;
        }
    };
    for entry in entries.flatten() {
        // Stop collecting well past the limit: `discover` reports it.
        if found.len() > limits.max_files {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = format!("{prefix}/{name}");
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&entry.path(), &relative, depth + 1, limits, found, problems);
        } else if name.ends_with(".yaml") {
            found.push((relative, entry.path()));
        } else if name.ends_with(".yml") {
            problems.push(
                Problem::warning(
                    "ignored-file",
                    "source files end in `.yaml`; this one is not read",
                )
                .in_file(&relative),
            );
        }
    }
}

/// Reads a file as UTF-8 text, refusing one over the size limit or that would take the folder over
/// its total before reading it whole.
pub fn read(
    file: &SourceFile,
    limits: &ReadLimits,
    total: &mut u64,
) -> Result<String, Box<Problem>> {
    let bytes = read_bounded(&file.path, &file.name, limits.max_file_bytes)?;
    check_size(&file.name, bytes.len() as u64, limits, total)?;
    decode(&file.name, bytes)
}

/// A file's bytes, never more than one past `max` (so a caller's size check sees it is too large
/// without the whole file in memory); a missing or unreadable file is `unreadable-file`, named
/// `name` in the problem. Source, release and character files are all read through here.
pub fn read_bounded(path: &Path, name: &str, max: u64) -> Result<Vec<u8>, Box<Problem>> {
    let unreadable = |error: std::io::Error| {
        let message = if error.kind() == std::io::ErrorKind::NotFound {
            "the file is missing".to_owned()
        } else {
            error.to_string()
        };
        Box::new(Problem::error("unreadable-file", message).in_file(name))
    };
    let mut bytes = Vec::new();
    fs::File::open(path)
        .map_err(unreadable)?
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    Ok(bytes)
}

/// A file's bytes as UTF-8 text, or `invalid-document` at the line and column of the first byte
/// that is not UTF-8 (columns in characters, as everywhere).
pub fn decode(name: &str, bytes: Vec<u8>) -> Result<String, Box<Problem>> {
    String::from_utf8(bytes).map_err(|error| {
        let valid = error.utf8_error().valid_up_to();
        // The prefix before the bad byte is UTF-8 by definition.
        let before = std::str::from_utf8(&error.as_bytes()[..valid]).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let at = Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        };
        Box::new(
            Problem::error(
                "invalid-document",
                format!("the file is not UTF-8 (byte {valid})"),
            )
            .in_file(name)
            .at("", Some(at)),
        )
    })
}

/// Counts a file of `size` bytes against the file and folder limits.
pub fn check_size(
    name: &str,
    size: u64,
    limits: &ReadLimits,
    total: &mut u64,
) -> Result<(), Box<Problem>> {
    let problem = |message: String, limit: &str| {
        Box::new(
            Problem::error("safety-limit-exceeded", message)
                .in_file(name)
                .with("limit", limit),
        )
    };
    if size > limits.max_file_bytes {
        return Err(problem(
            format!("the file is larger than {} bytes", limits.max_file_bytes),
            "maxFileBytes",
        ));
    }
    *total += size;
    if *total > limits.max_total_bytes {
        return Err(problem(
            format!(
                "the folder's files are larger than {} bytes together",
                limits.max_total_bytes
            ),
            "maxTotalBytes",
        ));
    }
    Ok(())
}
