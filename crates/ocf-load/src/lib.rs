//! Loading packs: the build turns a pack source folder into a release ([`build`]); `loadRuleset`
//! merges releases into a ruleset ([`ruleset`]); a character's homebrew is loaded on top of a
//! ruleset ([`homebrew`]). [`formulas`] finds and checks every formula of a pack, for both.

pub mod batch;
pub mod build;
pub mod character;
pub mod error;
pub mod families;
pub mod formulas;
pub mod homebrew;
pub mod parsed;
pub mod ruleset;
pub mod source;
pub mod version;

pub use error::LoadErrorRecord;
pub use homebrew::{HomebrewCache, load_homebrew};
pub use ruleset::{LoadOptions, load_ruleset};
