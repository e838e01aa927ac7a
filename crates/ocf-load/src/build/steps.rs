//! The build's per-file step, for a caller that keeps it between builds (the language server
//! memoizes it per file in its salsa database): reading one source file into its typed document
//! and its positions. The rest of the build reads the files read here, so a build given the same
//! reads is the build of the same texts, problem for problem.

use ocf_model::{ContentFile, ContentItem, PackManifest, RulesDocument};

use super::limits::ReadLimits;
use super::locations::Locations;
use super::problem::Problem;
use super::read;
use super::source::Role;

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
