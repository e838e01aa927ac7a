//! Building the roll (EA "Building the roll" 1–8; DA "Roll modifiers", "Pool dice"), step by step,
//! each a routine of the module named after it: [`parts`] (1), the roll [`effects`] (2's
//! candidates), what they do once [`stacking`] by key (2a replaced parts, `add` effects with the
//! parts' carried instances, modifiers, bounds and tallies), then the [`dice`] (2b die steps, 3
//! pool dice, 4 empty pools, 5 advantage, 6 multiplied dice, 7 rerolls, minimum faces and
//! explosions, 8 given faces). What they hand each other is in [`items`].

use ocf_formula::Value;

use crate::context::ActionContext;
use crate::error::ActionError;
use crate::run::{Frame, Run, StepAt};

mod dice;
mod effects;
mod items;
mod parts;
mod stacking;

pub use effects::instance_ctx;
use items::source;
pub use items::{Built, Carried, Counted, Factor, Item, Part, int_of};
use parts::Parts;

/// Builds a roll step's items by the chapter's steps, each reading what the ones before it left.
/// `ctx` is the step's context (nothing the build does changes what it reads).
pub fn build<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    ctx: &ActionContext<'db>,
    tags: std::rc::Rc<[crate::tag::Tag]>,
) -> Result<Built<'db>, ActionError> {
    let default_source = match &frame.item {
        Some(_) => ctx
            .item_value()
            .and_then(|v| match crate::context::member(&v, "id") {
                Some(Value::String(s)) => Some(source("item", s)),
                _ => None,
            })
            .unwrap_or_else(|| source("rules", frame.pack)),
        None => source("rules", frame.pack),
    };
    // 1. Parts.
    let Parts {
        mut items,
        parts,
        mut carried,
    } = parts::parts(run, ctx, at.step, &default_source)?;
    // 2. The roll effects, then what they do: replaced parts (2a), `add` effects stacked with the
    // parts' carried instances, modifiers, bounds and tallies each stacked by key.
    let counted = effects::roll_effects(run, frame, at, ctx, &tags)?;
    let settings = &run.ruleset.settings;
    stacking::replace_parts(run, &counted, &parts, &mut items, &mut carried)?;
    stacking::add_effects(run, &counted, &carried, &mut items)?;
    let (modifiers, bounds, tallies) = stacking::sorted_out(settings, &counted)?;
    // 2b. Die steps, then 3–8.
    dice::die_steps(&modifiers, &parts, &mut items);
    dice::pool_dice(&modifiers, &parts, &mut items);
    let empty = dice::empty_pools(&parts, &mut items, &default_source);
    let advantage = dice::advantage(settings, at.step, &modifiers, &mut items)?;
    dice::multiply_dice(&modifiers, &mut items);
    dice::dice_modifiers(&modifiers, &mut items)?;
    dice::given_faces(&modifiers, &parts, &mut items)?;
    // Multiply factors, counted, in effect order (EA "Rolling", Multiply).
    let multiply = dice::factors(&modifiers)?;
    for item in items.iter_mut() {
        if let Some(term) = &item.term {
            let mods: Vec<ocf_dice::ItemModifier> = term.modifiers.iter().map(Into::into).collect();
            item.item.modifiers = (!mods.is_empty()).then_some(mods);
        }
    }
    Ok(Built {
        items,
        parts,
        tags,
        empty,
        multiply,
        bounds,
        tallies,
        advantage,
        _marker: std::marker::PhantomData,
    })
}
