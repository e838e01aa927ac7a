//! Families, `viewFields` sets and field hints: what a rules document declares for expansion and
//! display rather than for the sheet itself.
//!
//! A **family** is a named set of declared values, each with its own fields (EC, loadRuleset step 1:
//! "Families"). A pack declares its own families by bare name and adds values to another pack's
//! family under the family's qualified name. A key written with a `{family}` placeholder is expanded
//! into one key per value (formats.md §2.7).

use std::ops::Deref;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::shape::{self, Never, Shape};
use crate::{Id, Keyed, Literal, ViewFieldDecl};

/// A family's values, by value ID, in written order; each value's fields by name (`fieldOf` reads
/// them). A value with no fields is `{}`.
pub type FamilyDecl = Keyed<FamilyValue>;

/// One family value's fields: literals, read as written in the pack that declared the value.
pub type FamilyValue = Keyed<Literal>;

/// A named set of view fields (`viewFields`), which a role's or a link slot's `fields` may name.
pub type ViewFieldSet = Keyed<ViewFieldDecl>;

/// A role's or a link slot's `fields`: written out, or the name of a `viewFields` set, which loading
/// expands into the set's fields (EC: "`fields` that name a `viewFields` set").
///
/// It reads as the map of fields (`Deref`); a set not expanded yet has none.
#[derive(Debug, Clone, PartialEq, Default, JsonSchema)]
#[schemars(with = "ViewFieldsSchema")]
pub struct ViewFields {
    /// The `viewFields` set named, until expansion replaces it with its fields.
    pub set: Option<Id>,
    pub fields: Keyed<ViewFieldDecl>,
}

impl ViewFields {
    /// Neither a set nor any field: nothing to write.
    pub fn is_empty(&self) -> bool {
        self.set.is_none() && self.fields.is_empty()
    }
}

impl Deref for ViewFields {
    type Target = Keyed<ViewFieldDecl>;

    fn deref(&self) -> &Keyed<ViewFieldDecl> {
        &self.fields
    }
}

impl From<Keyed<ViewFieldDecl>> for ViewFields {
    fn from(fields: Keyed<ViewFieldDecl>) -> ViewFields {
        ViewFields { set: None, fields }
    }
}

impl Serialize for ViewFields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.set {
            Some(set) => set.serialize(serializer),
            None => self.fields.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ViewFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Id, Keyed<ViewFieldDecl>, Never>(
            deserializer,
            "a map of view fields or the name of a `viewFields` set",
        )? {
            Shape::Scalar(set) => Ok(ViewFields {
                set: Some(set),
                fields: Keyed::default(),
            }),
            Shape::Map(fields) => Ok(fields.into()),
            Shape::List(never) => match never {},
        }
    }
}

/// The schema of [`ViewFields`]: the two shapes it reads.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ViewFieldsSchema {
    Set(Id),
    Fields(Keyed<ViewFieldDecl>),
}

/// A field hint (display-hints.md): where and how a sheet shows a field. A later pack's hint
/// with the same `id` replaces an earlier one (EC, step 2). A field without a hint is not on the
/// player's sheet (it stays in computeSheet's output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldHint {
    pub id: String,
    /// The field the hint is about; qualified by loading.
    pub field: Id,
    /// The display group the field is shown in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Its place in the group (and in the headline), lowest first; written order when equal or unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<i64>,
    /// How the value is shown; by its type when unset (a number as written, a boolean as a box,
    /// dice in notation, a set as a list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show: Option<Show>,
    /// The most dots, boxes of a track or segments of a clock, when the field's bounds don't give it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// A field whose value is this one's maximum, shown after it (`44 / 44`, a track of its length);
    /// qualified by loading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Id>,
    /// A field shown on the same line before this one's value, by its own hint (a proficiency's
    /// dots beside a skill's modifier); qualified by loading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<Id>,
    /// One of the character's headline values (name, level, AC, hit points), shown first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<bool>,
    /// When the field is left off the sheet: `always` (a field only other fields read), or
    /// `whenDefault` (while it holds its type's empty value: 0, false, an empty set, no dice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<Hidden>,
    /// The action a click on the field runs, with its parameters filled in (a save's ability, a
    /// skill's check, an action rating): a page rolls from the sheet without knowing the game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll: Option<RollHint>,
    /// A resource: the input field counting what is spent of it (qualified by loading). With a
    /// number, the field is the resource's maximum and a sheet shows what is left (`value −
    /// spent`) of it; a sheet offers to spend one (`spent` + 1) and regain one (`spent` − 1). A
    /// boolean `spent` is one use, marked when spent (an armor box), and may be the field itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<Id>,
    /// The field holding the character's name (a string input): a sheet titles the character
    /// with it when it is not blank, with the file's `id` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<bool>,
}

/// An odds hint (display-hints.md §4): one phrase of the summary a sheet gives of an action's
/// odds, worded by the text `odds.<id>.name` (`{chance} to hit · {mean} expected damage`). The
/// page knows no game; the hint says which results count (`results`, the action's own or, with
/// `role`, each participant's of that role) and which change's mean is meant (`field`, negated
/// with `loss`). A later pack's hint with the same `id` replaces an earlier one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OddsHint {
    pub id: String,
    /// The rules actions whose odds the phrase sums up (qualified at load).
    pub actions: Vec<Id>,
    /// A participant role: `results` are each participant's of that role (a target's save), and
    /// the phrase is given once per participant, `{name}` its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The results whose chances are summed as `{chance}`; the phrase is shown only where one of
    /// them is a possible result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<String>,
    /// The field whose proposed changes' means are summed as `{mean}` (qualified at load); the
    /// phrase is shown only where the action proposes a change to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Id>,
    /// `{mean}` is what the changes take away (damage): their mean negated, shown only when above 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<bool>,
}

/// A field hint's `roll`: a rules action (qualified at load) and the parameters it is given, as
/// startAction takes them (an `id` parameter's field as a qualified ID).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollHint {
    pub action: Id,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, serde_json::Value>,
}

/// How a sheet shows a value (display-hints.md "Show").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Show {
    /// As written: `14`, `2.5`.
    Number,
    /// Signed: `+4`, `+0`, `-1`.
    Modifier,
    /// Filled and empty dots up to the maximum: `●●○` (a proficiency, an action rating).
    Dots,
    /// A box, ticked or not: `[x]`, `[ ]` (a boolean, a condition).
    Box,
    /// Boxes up to the maximum, the value's ticked: `[■■■□□□□□□]` (stress, harm).
    Track,
    /// A clock of segments, the value's filled: `(2/4)`.
    Clock,
    /// A die or dice in notation: `d8`, `1d10 + 2`.
    Die,
    /// Text or an ID's name.
    Text,
}

/// When a hinted field is left off the sheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Hidden {
    Always,
    WhenDefault,
}
