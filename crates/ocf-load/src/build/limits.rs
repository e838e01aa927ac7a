//! The limits on what the build reads. Packs are untrusted ("every implementation enforces the safety
//! limits", DA), so a source folder can't make the build read, parse or expand without bound; reaching a
//! limit is `safety-limit-exceeded` with `data.limit` naming it.

/// The build's read limits. The spec gives no values (they are PROVISIONAL); ours are in
/// decisions.md "The build".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Bytes in one source file.
    pub max_file_bytes: u64,
    /// Bytes in all of a folder's source files together.
    pub max_total_bytes: u64,
    /// Source files in a folder.
    pub max_files: usize,
    /// Folder nesting under `rules/` and `content/`.
    pub max_folder_depth: usize,
    /// Nesting of YAML maps and lists in one document.
    pub max_nesting: usize,
    /// Nodes in one document with every alias expanded: an alias bomb is refused, not expanded.
    pub max_expanded_nodes: u64,
    /// `extends` chain length (`maxExtendsDepth`).
    pub max_extends_depth: usize,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        ReadLimits {
            max_file_bytes: 4 * 1024 * 1024,
            max_total_bytes: 64 * 1024 * 1024,
            max_files: 10_000,
            max_folder_depth: 16,
            max_nesting: 64,
            max_expanded_nodes: 1_000_000,
            max_extends_depth: 16,
        }
    }
}
