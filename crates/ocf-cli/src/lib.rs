//! The `ocf` command's library half: what the binary and the tests share.

pub mod bench_edit;
pub mod build;
pub mod character;
pub mod conform;
pub mod output;
pub mod schema;
pub mod serve;
pub mod text_sheet;
pub mod users;
pub mod yaml_patch;
