//! OCF data formats: the serde types of packs (the `pack.yaml` manifest, rules documents, content items),
//! pack releases and character files, as `docs/spec/formats.md` reconstructs them.
//!
//! This crate only describes data. Formulas stay text ([`Formula`]); parsing them, resolving IDs, merging
//! packs and checking what the types cannot say (an effect's `value` fitting its `op`, a step's keys fitting
//! its `kind`) is the loader's job.
//!
//! Every struct rejects unknown keys. [`from_yaml_str`] and [`from_json_str`] report the error's path
//! inside the document and, for an unknown key, the nearest known one.

mod action;
mod change;
mod character;
mod checked;
mod choice;
mod content;
mod derived;
mod effect;
mod error;
mod family;
mod field;
mod follow_up;
mod formula;
mod id;
mod keyed;
mod pack;
pub mod refs;
mod roll_modifier;
mod rules;
pub mod ruleset;
mod shape;
mod step;
mod suggest;
pub mod text;
pub mod written;

pub use action::{Action, ActionScope, ParamDecl, ParamEntry, Results, Role};
pub use change::{
    Change, ChangeType, ChoicePath, ChoicePathSegments, EntryQuery, EntryRef, FieldRef, NewEntry,
    NewPick, Split,
};
pub use character::{
    AppliedEntry, Character, CopyEntry, Homebrew, PackPin, PickEntry, Picks, StoredOffer,
};
pub use choice::{Choice, ChoiceOptions, ChoiceSource, InlineOption, PickCount, UniqueScope};
pub use content::{
    ContentFile, ContentItem, ContentTypeDecl, CopyLimits, EffectKey, Grant, Immunity,
    KeptTemplate, Prerequisite, Query,
};
pub use derived::Derived;
pub use effect::{
    ChangesValue, Duration, Effect, EffectOption, EffectValue, FieldsQuery, From, GrantValue,
    IncomingFilter, Op, Scope, Target,
};
pub use error::{LoadError, LoadErrorKind, from_json_str, from_yaml_str};
pub use family::{
    FamilyDecl, FamilyValue, FieldHint, Hidden, OddsHint, RollHint, Show, ViewFieldSet, ViewFields,
};
pub use field::{
    ComputedDecl, ComputedType, FieldDecl, FieldType, ItemFieldDecl, Limit, Recommend, Rounding,
    StateDecl, ViewFieldDecl,
};
pub use follow_up::FollowUp;
pub use formula::{Computed, Formula, TagEntry};
pub use id::{Id, Tag, Version, VersionRange};
pub use keyed::Keyed;
pub use pack::{PackManifest, PackRelease};
pub use roll_modifier::{RollModifier, RollModifierKind};
pub use rules::{
    Advantage, Band, BandSet, CompetingSettings, Constraint, CreationStart, DisplayGroup,
    GroupFrom, LinkSlot, RollModifierSettings, RulesDocument, Settings, SituationalDecl,
    StackPolicy, StackingSettings,
};
pub use ruleset::{
    Conflict, ContentEntry, Declared, Family, FamilyMember, LoadedPack, Namespace, QueryResult,
    Ruleset, tag_matches,
};
pub use step::{
    AllocateFields, AllocateOf, As, Better, BranchCase, Destination, ElseCase, PendingSource,
    Release, Repeat, RollPart, Sheet, Spend, Step, StepKind, StepOptions, StepRecommend,
    StepSource, WrittenOption,
};
pub use suggest::nearest as nearest_key;

/// A literal value whose type the declaration decides: a saved field value, an item field value, a state
/// value. JSON, since a pack release and a character file are JSON documents.
pub type Literal = serde_json::Value;
