//! Building the roll, the roll being built (EA "Building the roll"): its items, parts, carried
//! instances and counted effects, what the steps hand each other, and the helpers they share
//! (items of a dice value, a part's source, a modifier's argument). Below the steps' modules.

use ocf_dice::item::ItemSource;
use ocf_dice::{DiceTerm, DiceValue, ItemKind, RollItem};
use ocf_formula::Value;
use ocf_model::{Effect, Op, RollModifierKind};

use crate::context::ActionContext;
use crate::error::ActionError;
use crate::tag::Tag;

/// One roll item being built.
#[derive(Debug, Clone)]
pub struct Item {
    /// Boxed: a roll's items stay a small vector (glibc's allocator serves a block of 1 KiB or
    /// more on its slow path, consolidating its small free blocks first).
    pub item: Box<RollItem>,
    /// A dice item's dice, as they will be rolled.
    pub term: Option<DiceTerm>,
    /// The part it came from (`None`: added by an effect).
    pub part: Option<usize>,
    /// Faces given by `setFaces`, rolled first.
    pub given: Vec<i64>,
    /// Pool dice added: how many initial dice the item had before, and each added die's source.
    pub pool: Option<(u32, Vec<ItemSource>)>,
}

/// A part's (or a roll effect's) evaluated tags, which its items share.
pub type Tags = std::sync::Arc<[Tag]>;

/// One part as built.
#[derive(Debug, Clone)]
pub struct Part {
    pub tags: Tags,
    pub multiplied: bool,
    pub if_empty: Option<DiceValue>,
    pub is_dice: bool,
}

/// A field instance a part carries (EA "Building the roll" 1): an `add` with a `stackKey` that
/// counted on the sheet, kept for the roll's stacking in step 2.
#[derive(Debug, Clone)]
pub struct Carried {
    pub part: usize,
    /// The key as written (`source` is each source's own group).
    pub key: String,
    /// The instance's source ID, which a `source` key groups by.
    pub source_id: String,
    pub value: i64,
    pub source: ItemSource,
    /// Instance order, for the group's order with the roll's own effects.
    pub order: usize,
}

/// A counted roll effect, with its source and the context its formulas see.
pub struct Counted<'a> {
    pub effect: &'a Effect,
    pub source: ItemSource,
    /// Boxed, as [`Item::item`] is: a roll's counted effects stay a small vector.
    pub ctx: Box<ActionContext<'a>>,
    /// Instance order; situational choices' effects come after every instance.
    pub order: usize,
}

/// A counted `multiply` roll modifier: its factor, exact and as reported, and the effect's own
/// `rounding` (EA "Rolling", Multiply: "by the effect's `rounding`, else `settings.rounding`").
pub struct Factor {
    pub exact: ocf_formula::decimal::Millionths,
    pub reported: f64,
    pub rounding: Option<ocf_model::Rounding>,
}

pub struct Built<'a> {
    pub items: Vec<Item>,
    pub parts: Vec<Part>,
    pub tags: std::rc::Rc<[Tag]>,
    pub empty: bool,
    /// `multiply` factors in effect order.
    pub multiply: Vec<Factor>,
    /// Counted `atLeast` / `atMost` effects on the total: op, value, source.
    pub bounds: Vec<(Op, i64, ItemSource)>,
    /// Roll tally effects: tally name, op, value.
    pub tallies: Vec<(String, Op, i64)>,
    /// Every advantage and disadvantage source, cancelled ones included, for the log.
    pub advantage: Vec<(String, ItemSource)>,
    pub _marker: std::marker::PhantomData<&'a ()>,
}

pub(super) fn source(kind: &str, id: &str) -> ItemSource {
    ItemSource {
        kind: ocf_formula::value::shared(kind),
        id: Some(ocf_formula::value::shared(id)),
    }
}

pub(super) fn dice_items(value: &Value, what: &str) -> Result<DiceValue, ActionError> {
    match value {
        Value::Dice(d) => Ok((**d).clone()),
        Value::Int(n) => Ok(DiceValue::flat(*n)),
        Value::Decimal(d) => Ok(DiceValue::flat(d.floor())),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("{what} gives a {}, not dice or a number", other.type_name()),
        )),
    }
}

pub(super) fn new_dice_item(
    term: &DiceTerm,
    src: &ItemSource,
    tags: &Tags,
    multiplied: bool,
) -> Item {
    let mut item = RollItem::flat(0);
    item.kind = ItemKind::Dice;
    item.count = Some(term.count);
    item.sides = Some(term.die.into());
    item.source = Some(src.clone());
    item.tags = (!tags.is_empty()).then(|| tags.clone());
    item.multiplied = (!multiplied).then_some(false);
    Item {
        item: Box::new(item),
        term: Some(term.clone()),
        part: None,
        given: Vec::new(),
        pool: None,
    }
}

pub(super) fn new_flat_item(value: i64, src: &ItemSource, tags: &Tags, multiplied: bool) -> Item {
    let mut item = RollItem::flat(value);
    item.source = Some(src.clone());
    item.tags = (!tags.is_empty()).then(|| tags.clone());
    item.multiplied = (!multiplied).then_some(false);
    Item {
        item: Box::new(item),
        term: None,
        part: None,
        given: Vec::new(),
        pool: None,
    }
}

/// The items of a dice value: one per term, then its flat part when non-zero.
pub(super) fn items_of(
    dice: &DiceValue,
    src: &ItemSource,
    tags: &Tags,
    multiplied: bool,
) -> Vec<Item> {
    let mut out: Vec<Item> = dice
        .terms
        .iter()
        .map(|t| new_dice_item(t, src, tags, multiplied))
        .collect();
    if dice.flat != 0 {
        out.push(new_flat_item(dice.flat, src, tags, multiplied));
    }
    out
}

/// The field a formula names when it is a single field reference (`abilities.str.mod`).
pub(super) fn single_field(ctx: &ActionContext<'_>, text: &str) -> Option<String> {
    let t = text.trim();
    let plain = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' || c == ':')
        && t.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if !plain || ocf_formula::Root::from_name(t.split('.').next().unwrap_or("")).is_some() {
        return None;
    }
    ctx.sheet.resolve(t).map(|field| field.to_string())
}

/// A counted roll modifier: its effect, the modifier, and the number it stacks by.
pub(super) type Counting<'c, 'db> = (&'c Counted<'db>, &'c ocf_model::RollModifier, i128);

/// A roll modifier's argument (`factor`, `steps` or `count`), evaluated; none when it fails.
pub(super) fn arg(c: &Counted<'_>, m: &ocf_model::RollModifier) -> Option<Value> {
    let f = match m.kind {
        RollModifierKind::Multiply | RollModifierKind::MultiplyDice => m.factor.as_ref(),
        RollModifierKind::StepDie => m.steps.as_ref(),
        _ => m.count.as_ref(),
    };
    f.and_then(|f| c.ctx.eval(f.as_str()).ok())
}

/// [`arg`] as an integer, floored; 0 when it fails.
pub(super) fn arg_int(c: &Counted<'_>, m: &ocf_model::RollModifier) -> i64 {
    arg(c, m)
        .and_then(|v| v.as_decimal())
        .map_or(0, |d| d.floor())
}

/// The die and modifiers of a computed-count dice formula (`(params.rating.value)d6kh1`), as a
/// term of 0 dice.
pub(super) fn zero_term(text: &str) -> Option<DiceTerm> {
    use ocf_syntax::ast::Expr;
    let parse = ocf_syntax::parse(text);
    let Some(Expr::ComputedDice(d)) = parse.root().expr() else {
        return None;
    };
    let n = d.notation()?;
    Some(DiceTerm::new(0, n.die, n.modifiers))
}

pub fn int_of(value: &Value) -> Result<i64, ActionError> {
    match value {
        Value::Int(n) => Ok(*n),
        Value::Decimal(d) => Ok(d.floor()),
        other => Err(ActionError::new(
            "type-mismatch",
            format!("expected a number, got a {}", other.type_name()),
        )),
    }
}
