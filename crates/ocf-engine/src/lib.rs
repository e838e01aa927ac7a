//! The OCF sheet engine: `computeSheet` as incremental salsa queries.
//!
//! Layering, as rust-analyzer's: [`input`] holds the database's inputs (the ruleset, and a
//! character split so that one edit touches one input); each query lives next to what it computes:
//! [`formula`] (parsed formulas), [`view`] (`item`, `self`, `character`), [`activation`] (what is
//! active), [`effects`] (effect instances per field) and [`field`] (each field's value). [`sheet`]
//! assembles computeSheet's output and [`sheet_changes`] tells what an edit changed in it;
//! [`options`] is listOptions, [`changes`] applyChanges; [`session`] is the long-running front.

pub mod actions;
pub mod activation;
pub mod changes;
pub mod choices;
pub mod computed;
pub mod context;
pub mod db;
pub mod derived;
pub mod effects;
pub mod field;
pub mod file_check;
pub mod formula;
pub mod input;
pub mod links;
pub mod offers;
pub mod options;
pub mod reads;
pub mod session;
pub mod sheet;
pub mod sheet_changes;
pub mod standard;
pub mod synthetic;
pub mod targets;
pub mod view;

pub use crate::changes::{
    Applied, ChangeError, Options as ApplyOptions, apply_changes, apply_changes_json,
};
pub use crate::db::{Database, field_value};
pub use crate::field::{FieldKey, FieldValue};
pub use crate::input::{CharacterInput, CopyInput, RulesetInput};
pub use crate::session::{CharacterId, EditError, RECLAIM_AFTER, Session};
pub use crate::sheet::{Sheet, compute_sheet, compute_sheet_call, compute_sheet_shared};
pub use crate::sheet_changes::{ChangedField, ChangedParts, SheetChanges};
