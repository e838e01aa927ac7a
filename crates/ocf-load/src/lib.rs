//! Loading packs: the build turns a pack source folder into a release ([`build`]); `loadRuleset`
//! merges releases into a ruleset ([`ruleset`]); a character's homebrew is loaded on top of a
//! ruleset ([`homebrew`]).

pub mod build;
pub mod homebrew;
pub mod ruleset;
