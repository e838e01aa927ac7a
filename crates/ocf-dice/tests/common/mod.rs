//! Test helpers: dice values from notation, for tests only (the formula parser builds them for real).

use ocf_dice::{DiceTerm, DiceValue, Modifier};
use ocf_syntax::dice::decode;

/// `4d6dl1 + 1d4 - 2`: terms joined by ` + ` / ` - `, a trailing number is the flat part. A reroll
/// `count` has no notation: a term ending in `#N` (`4d6r1#1`) gives its reroll the count N.
#[allow(dead_code)]
pub fn dice(text: &str) -> DiceValue {
    let mut value = DiceValue::default();
    let mut negative = false;
    for token in text.split_whitespace() {
        match token {
            "+" => negative = false,
            "-" => negative = true,
            t if t.bytes().all(|b| b.is_ascii_digit()) => {
                let n: i64 = t.parse().unwrap();
                value.flat += if negative { -n } else { n };
            }
            t => {
                let (negative, t) = match t.strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (negative, t),
                };
                let (t, reroll_count) = match t.split_once('#') {
                    Some((t, n)) => (t, Some(n.parse::<u32>().unwrap())),
                    None => (t, None),
                };
                let mut notation = decode(t).unwrap_or_else(|e| panic!("{t}: {e:?}"));
                if let Some(n) = reroll_count {
                    for m in &mut notation.modifiers {
                        if let Modifier::Reroll { count, .. } | Modifier::RerollOnce { count, .. } =
                            m
                        {
                            *count = Some(n);
                        }
                    }
                }
                value.terms.push(DiceTerm {
                    negative,
                    count: notation.count.unwrap(),
                    die: notation.die,
                    modifiers: notation.modifiers,
                });
            }
        }
    }
    value
}
