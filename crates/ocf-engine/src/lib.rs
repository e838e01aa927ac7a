//! The OCF sheet engine: `computeSheet`, `listOptions` and `applyChanges` as incremental salsa
//! queries, and a long-running [`Session`].
//!
//! [`db`] is the map: every query, in the chapter's order, with what it computes and reads, and
//! the only place where activation, effects and field values reach each other; the modules that
//! implement a step import the map and the floors below it, not each other (the floors are named
//! in `ocf-modules`' `ENGINE_FLOORS`; `cargo test -p ocf-modules` checks them).
//! Where each section of engine-core.md (EC) and effects.md (EF) lives: a character loaded in
//! one pass by [`load`] ([`file_check`] the file's `errors`, [`standard`] EC "Standard copies",
//! [`input`] the inputs); EC "The character as engines see it" in [`view`], [`links`] and
//! [`context`]; EC "Activation" in [`activation`]; EC "Effects" in [`effects`] and [`targets`];
//! EC "Field values" and EF "Fixed order" in [`field`] (with [`stacking`] for EF "Stacking" and
//! [`depth`] for EF "Loops"); EC "Pending choices and issues" in [`choices`], [`option_trials`],
//! [`offers`], [`issues`] and [`report`]; EC computeSheet "Actions" in [`actions`]; EC "Computed
//! values" in [`computed`]; computeSheet's output in [`sheet`], [`sheet_changes`] and
//! [`sheet_call`]; listOptions in [`options`] (its trials are derived characters, [`derived`]);
//! applyChanges in [`changes`]; the long-running front in [`session`].

pub mod actions;
pub mod activation;
pub mod changes;
pub mod choices;
pub mod computed;
pub mod context;
pub mod db;
pub mod depth;
pub mod derived;
pub mod effects;
pub mod field;
pub mod file_check;
pub mod formula;
pub mod input;
pub mod issues;
pub mod links;
pub mod load;
pub mod offers;
pub mod option_trials;
pub mod options;
pub mod reads;
pub mod report;
pub mod session;
pub mod sheet;
pub mod sheet_call;
pub mod sheet_changes;
pub mod stacking;
pub mod standard;
pub mod targets;
pub mod view;

#[cfg(test)]
mod synthetic_tests;

pub use crate::changes::{
    Applied, ChangeError, Options as ApplyOptions, apply_changes, apply_changes_json,
};
pub use crate::db::{Database, field_value};
pub use crate::field::{FieldKey, FieldValue};
pub use crate::input::{CharacterInput, CopyInput, RulesetInput};
pub use crate::session::{CharacterId, EditError, RECLAIM_AFTER, Session};
pub use crate::sheet::{Sheet, compute_sheet};
pub use crate::sheet_call::{compute_sheet_call, compute_sheet_shared};
pub use crate::sheet_changes::{ChangedField, ChangedParts, SheetChanges};
