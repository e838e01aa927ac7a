//! ocf-lsp: a language server for pack authors. It speaks the Language Server Protocol over stdio
//! (`ocf lsp`), synchronously, on rust-analyzer's `lsp-server` and `lsp-types`. A workspace is
//! one or more pack source folders (found by their `pack.yaml`) with their dependency packs; each
//! file's text is a salsa input and its index, the pack's build and each file's diagnostics are
//! queries ([`db`]), so a keystroke re-checks that file and what reads it.

pub mod character;
pub mod complete;
pub mod db;
pub mod diagnostics;
pub mod docs;
pub mod features;
pub mod ide;
pub mod names;
pub mod schema;
pub mod server;
pub mod symbols;
pub mod synthetic;
pub mod text;
pub mod translations;
pub mod transport;
pub mod world;
pub mod yaml;

pub use server::{run_stdio, serve, serve_streams};
