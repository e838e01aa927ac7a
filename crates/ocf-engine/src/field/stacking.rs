//! A field's value, `add` and stacking (EF "Fixed order" 3, "Stacking"): the effects counted,
//! grouped by stack key, target and op, and combined by the game's policy; each applied step
//! recorded in the breakdown.

use super::*;

impl<'db> Work<'_, 'db> {
    /// The instances of `op` whose `when` holds, with their values, in instance order.
    pub(super) fn counted(
        &self,
        instances: &[&'db Placed],
        op: Op,
    ) -> Result<Vec<Counted>, FieldError> {
        // Sized to the operation's instances: none, for most operations of a field.
        let of_op = instances.iter().filter(|i| i.effect.op == op);
        let mut counted = Vec::with_capacity(of_op.clone().count());
        for instance in of_op {
            if let Some(c) = self.count(instance)? {
                counted.push(c);
            }
        }
        Ok(counted)
    }

    /// Evaluates an instance's `when`, then its value. `None` when `when` doesn't hold.
    pub(super) fn count(&self, instance: &'db Placed) -> Result<Option<Counted>, FieldError> {
        let ctx = self.instance_context(instance);
        if let Some(when) = &instance.effect.when {
            let when = self
                .eval(when.as_str(), &ctx)
                .map_err(|e| e.at(|| self.effect_site(instance, "when")))?;
            match when {
                Value::Bool(true) => {}
                Value::Bool(false) => return Ok(None),
                other => {
                    return Err(FieldError::new(
                        ErrorCode::TypeMismatch,
                        format!(
                            "`when` of {} is a {}",
                            instance.option_id,
                            other.type_name()
                        ),
                    ));
                }
            }
        }
        let value = match &instance.effect.value {
            Some(EffectValue::Formula(f)) => self
                .eval(f.as_str(), &ctx)
                .map_err(|e| e.at(|| self.effect_site(instance, "value")))?,
            Some(EffectValue::Grant(grant)) => self
                .grant_value(grant, &ctx)
                .map_err(|e| e.at(|| self.effect_site(instance, "value")))?,
            _ => return Ok(None),
        };
        Ok(Some(Counted {
            instance: instance.clone(),
            value,
        }))
    }

    /// Stacking (EC, "Stacking"): instances with a `stackKey` are grouped by key (`source` meaning
    /// the source content) and reduced by the key's policy. What counts keeps instance order.
    pub(super) fn stack(
        &mut self,
        op: Op,
        counted: Vec<Counted>,
    ) -> Result<Vec<Counted>, FieldError> {
        // Most of a field's operations have no instance, or none with a stack key: nothing to
        // group (each value computed asks this for all six operations).
        if counted
            .iter()
            .all(|c| c.instance.effect.stack_key.is_none())
        {
            return Ok(counted);
        }
        let groups = crate::stacking::stack_groups_of(
            self.settings,
            counted.iter().map(|c| {
                (
                    c.instance.effect.stack_key.as_deref(),
                    c.instance.source.id.as_str(),
                )
            }),
        );
        let mut keep = vec![true; counted.len()];
        for crate::stacking::StackGroup {
            key: written,
            policy,
            members,
        } in &groups
        {
            let chosen = match policy {
                StackPolicy::AddAll => continue,
                StackPolicy::HighestOnly => extreme(&counted, members, true)?,
                StackPolicy::LowestOnly => extreme(&counted, members, false)?,
                StackPolicy::PlayerChooses => {
                    let group: Vec<&Counted> = members.iter().map(|&m| &counted[m]).collect();
                    let recommended = extreme(&counted, members, true)?;
                    self.record_group(op, Some(written.clone()), &group, members, recommended)
                }
            };
            for &m in members {
                if m != chosen {
                    keep[m] = false;
                    self.out.suppressed.push(counted[m].instance.field_at);
                }
            }
        }
        Ok(counted
            .into_iter()
            .zip(keep)
            .filter_map(|(c, k)| k.then_some(c))
            .collect())
    }

    pub(super) fn step(&mut self, op: Op, value: Value, instance: &Instance) {
        self.out.breakdown.push(Step {
            op,
            value,
            source: instance.source.clone(),
        });
    }
}
