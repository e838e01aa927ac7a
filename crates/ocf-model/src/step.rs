//! Action steps (action.schema.json): `roll`, `choice`, `allocate`, `branch`, `changes`, `action` and
//! `outcome`.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::checked::{self, checked_struct};
use crate::shape::{self, Never, Shape};
use crate::{Change, Formula, Id, Keyed, Query, TagEntry};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepKind {
    Roll,
    Choice,
    Allocate,
    Branch,
    Changes,
    Action,
    Outcome,
}

checked_struct! {
    /// A step. One struct holds the keys of every kind, each documented with the kinds that take it;
    /// reading a step checks that each written key belongs to its `kind`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", try_from = "RawStep")]
    pub struct Step read as RawStep {
        required {
            pub id: String,
            pub kind: StepKind,
        }
        optional {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub when: Option<Formula>,
            /// `given` (default) or `proposed`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub sheet: Option<Sheet>,
            /// Roll, choice, changes and action steps: tags, `{ formula }` entries allowed.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tags: Vec<TagEntry>,
            /// Roll, choice, changes, action and branch steps: run once per participant of this role.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub each: Option<String>,
            /// Roll: the step's name when there is no text key.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub label: Option<String>,
            /// Choice: the question when there is no text key.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub prompt: Option<String>,
            /// Roll: the parts, one roll item each.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub parts: Vec<RollPart>,
            /// Roll: the band set that classifies it.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub bands: Option<Id>,
            /// Roll: `high` (default) or `low`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub better: Option<Better>,
            /// Roll: classify an earlier roll (its step path) instead of rolling.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub of: Option<String>,
            /// Choice: where the options come from.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub options: Option<StepOptions>,
            /// Choice: a formula giving the recommended option ID. Allocate: field ID to amount formula.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub recommend: Option<StepRecommend>,
            /// Choice over content or copies: a number per candidate.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub prefer: Option<Formula>,
            /// Choice, allocate: while it holds, the recommendation is drawn at random.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub random: Option<Formula>,
            /// Choice: pick up to `max` times.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub repeat: Option<Repeat>,
            /// Choice: proposed after every pick. Changes: the step's changes.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub changes: Vec<Change>,
            /// Allocate: the fields offered.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fields: Option<AllocateFields>,
            /// Allocate: the budget to spend.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub budget: Option<Formula>,
            /// Allocate: `all` (default) or `upTo`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub spend: Option<Spend>,
            /// Allocate: a per-field bound on the amount, with `field` bound.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub limit: Option<Formula>,
            /// Allocate: what an amount costs, with `field` and `amount` bound.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cost: Option<Formula>,
            /// Allocate: values handed out, one per field.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub values: Vec<Formula>,
            /// Branch: the cases, first whose `when` holds wins.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub cases: Vec<BranchCase>,
            /// Branch: what runs when no case holds.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub r#else: Option<ElseCase>,
            /// Changes (and a choice step's changes): `self` (default), `target`, a role or `{ link }`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub to: Option<Destination>,
            /// Changes: propose changes `hold` action steps held.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub release: Option<Release>,
            /// Action: the action to run.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub r#use: Option<Id>,
            /// Action: parameter formulas.
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub params: Keyed<Formula>,
            /// Action: a formula giving the content whose listing runs.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub source: Option<Formula>,
            /// Action: a formula giving the copy whose listing runs.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub entry: Option<Formula>,
            /// Action: role to a formula giving participant IDs or views.
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub participants: Keyed<Formula>,
            /// Action: situational choice ID to a formula.
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub situational: Keyed<Formula>,
            /// Action: hold the nested action's changes for a later `release`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub hold: Option<bool>,
            /// Action: `participant` hands the action off (with `each`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub r#as: Option<As>,
            /// Outcome: the result, a string formula.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub result: Option<Formula>,
            /// Outcome: data, each value a formula.
            #[serde(default, skip_serializing_if = "Keyed::is_empty")]
            pub data: Keyed<Formula>,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Sheet {
    Given,
    Proposed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Better {
    High,
    Low,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Spend {
    All,
    UpTo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum As {
    Participant,
}

/// A roll part: exactly one of `dice`, `value`, `field`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollPart {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dice: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Formula>,
    /// A formula giving a field ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagEntry>,
    /// The item's source, when neither the field nor the action's item or rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplied: Option<bool>,
    /// The dice to roll when pool dice leave the part with none (`2d6kl1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_empty: Option<Formula>,
}

/// A choice step's `options`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StepOptions {
    Written(Vec<WrittenOption>),
    Source(StepSource),
}

impl<'de> Deserialize<'de> for StepOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Never, StepSourceMap, Vec<WrittenOption>>(
            deserializer,
            "a list of options or one of `{ content }`, `{ copies }`, `{ pending }`",
        )? {
            Shape::List(options) => Ok(StepOptions::Written(options)),
            Shape::Map(StepSourceMap {
                content,
                copies,
                pending,
            }) => match (content, copies, pending) {
                (Some(query), None, None) => {
                    Ok(StepOptions::Source(StepSource::Content { content: query }))
                }
                (None, Some(query), None) => {
                    Ok(StepOptions::Source(StepSource::Copies { copies: query }))
                }
                (None, None, Some(pending)) => {
                    Ok(StepOptions::Source(StepSource::Pending { pending }))
                }
                _ => Err(D::Error::custom(
                    "options have exactly one of `content`, `copies`, `pending`",
                )),
            },
            Shape::Scalar(never) => match never {},
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StepSourceMap {
    content: Option<Query>,
    copies: Option<Query>,
    pending: Option<PendingSource>,
}

/// Where a choice step's options come from, other than a written list.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum StepSource {
    /// The ruleset's content of a type.
    Content { content: Query },
    /// The character's copies of a type.
    Copies { copies: Query },
    /// The choices still pending on the proposed character.
    Pending { pending: PendingSource },
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PendingSource {
    /// Only this copy's choices (an instance ID formula).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<Formula>,
}

/// A written option of a choice step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WrittenOption {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Destination>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub flags: Keyed<Formula>,
}

/// A choice step's `recommend` (a formula) or an allocate step's (field ID to amount formula).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StepRecommend {
    Option(Formula),
    Amounts(Keyed<Formula>),
}

impl<'de> Deserialize<'de> for StepRecommend {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Formula, Keyed<Formula>, Never>(
            deserializer,
            "a formula (choice) or a map of field IDs to formulas (allocate)",
        )? {
            Shape::Scalar(formula) => Ok(StepRecommend::Option(formula)),
            Shape::Map(amounts) => Ok(StepRecommend::Amounts(amounts)),
            Shape::List(never) => match never {},
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Repeat {
    pub max: Formula,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Formula>,
}

/// An allocate step's `fields: { type: field, where? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllocateFields {
    pub r#type: AllocateOf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#where: Option<Formula>,
}

/// The only kind an allocate step hands amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AllocateOf {
    Field,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchCase {
    pub when: Formula,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub flags: Keyed<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

/// A branch's `else`: a case without `when`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ElseCase {
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub flags: Keyed<Formula>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Release {
    pub steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#where: Option<Formula>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combine: Option<bool>,
}

/// Where changes go: `self`, `target`, a role, or `{ link: <slot> }`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum Destination {
    /// `self`, `target` or a declared role.
    Named(String),
    Link {
        link: Id,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LinkDestination {
    link: Id,
}

impl<'de> Deserialize<'de> for Destination {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, String, LinkDestination, Never>(
            deserializer,
            "`self`, `target`, a role or `{ link: <slot> }`",
        )? {
            Shape::Scalar(name) => Ok(Destination::Named(name)),
            Shape::Map(LinkDestination { link }) => Ok(Destination::Link { link }),
            Shape::List(never) => match never {},
        }
    }
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Roll => "roll",
            StepKind::Choice => "choice",
            StepKind::Allocate => "allocate",
            StepKind::Branch => "branch",
            StepKind::Changes => "changes",
            StepKind::Action => "action",
            StepKind::Outcome => "outcome",
        }
    }

    /// The optional keys a step of this kind takes (DA's step table and EA).
    fn keys(self) -> &'static [&'static str] {
        match self {
            StepKind::Roll => &[
                "when", "sheet", "tags", "each", "label", "parts", "bands", "better", "of",
            ],
            StepKind::Choice => &[
                "when",
                "sheet",
                "tags",
                "each",
                "prompt",
                "options",
                "recommend",
                "prefer",
                "random",
                "repeat",
                "changes",
            ],
            StepKind::Allocate => &[
                "when",
                "sheet",
                "prompt",
                "fields",
                "budget",
                "spend",
                "limit",
                "cost",
                "values",
                "recommend",
                "random",
            ],
            StepKind::Branch => &["when", "sheet", "each", "cases", "else"],
            StepKind::Changes => &["when", "sheet", "tags", "each", "changes", "to", "release"],
            StepKind::Action => &[
                "when",
                "sheet",
                "tags",
                "each",
                "use",
                "params",
                "source",
                "entry",
                "participants",
                "situational",
                "hold",
                "as",
            ],
            StepKind::Outcome => &["when", "sheet", "result", "data"],
        }
    }
}

impl TryFrom<RawStep> for Step {
    type Error = String;

    fn try_from(raw: RawStep) -> Result<Step, String> {
        let step = raw.into_public();
        let kind = step.kind.name();
        let what = format!("{} `{kind}` step", checked::article(kind));
        checked::misplaced(&step.written_keys(), step.kind.keys(), &what)?;
        match (&step.recommend, step.kind) {
            (Some(StepRecommend::Amounts(_)), StepKind::Choice) => {
                return Err("a choice step's `recommend` is a formula".to_owned());
            }
            (Some(StepRecommend::Option(_)), StepKind::Allocate) => {
                return Err("an allocate step's `recommend` maps field IDs to formulas".to_owned());
            }
            _ => {}
        }
        if step.release.is_some() && step.each.is_some() {
            return Err("a step with `release` doesn't take `each`".to_owned());
        }
        Ok(step)
    }
}
