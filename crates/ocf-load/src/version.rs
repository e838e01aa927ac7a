//! Semantic versions and npm-style version ranges (formats.md: "each with an npm-style version range
//! (`^1.0.0`, `>=0.3.0 <0.5.0`)"): exact, `^`, `~`, `>=`/`>`/`<=`/`<`/`=`, partials (`1`, `1.2`, `1.x`,
//! `*`), comparators joined by spaces (all must hold) and `||` (any set may hold). Pre-release tags
//! are not part of the format and do not parse.

/// `MAJOR.MINOR.PATCH`.
pub type Semver = (u64, u64, u64);

pub fn parse_version(text: &str) -> Option<Semver> {
    let mut parts = text.trim().split('.');
    let v = (
        number(parts.next()?)?,
        number(parts.next()?)?,
        number(parts.next()?)?,
    );
    parts.next().is_none().then_some(v)
}

fn number(text: &str) -> Option<u64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Whether `version` is in `range`; `None` when the range does not parse.
pub fn satisfies(version: Semver, range: &str) -> Option<bool> {
    let mut any = false;
    for set in range.split("||") {
        let mut all = true;
        let mut empty = true;
        for comparator in set.split_whitespace() {
            empty = false;
            let (low, high) = bounds(comparator)?;
            all &= low.is_none_or(|l| version >= l) && high.is_none_or(|h| version < h);
        }
        if empty && !range.trim().is_empty() && range.contains("||") {
            return None;
        }
        any |= all;
    }
    Some(any)
}

/// A partial version: the numbers written before the first wildcard.
fn partial(text: &str) -> Option<Vec<u64>> {
    if text.is_empty() {
        return None;
    }
    let mut numbers = Vec::new();
    let mut wild = false;
    for (i, part) in text.split('.').enumerate() {
        if i >= 3 {
            return None;
        }
        if matches!(part, "x" | "X" | "*") {
            wild = true;
        } else if wild {
            return None;
        } else {
            numbers.push(number(part)?);
        }
    }
    Some(numbers)
}

fn floor(p: &[u64]) -> Semver {
    (
        p.first().copied().unwrap_or(0),
        p.get(1).copied().unwrap_or(0),
        p.get(2).copied().unwrap_or(0),
    )
}

/// The first version after every version `p` stands for (`1.2` → `1.3.0`); `None` for `*`.
fn after(p: &[u64]) -> Option<Semver> {
    Some(match p.len() {
        0 => return None,
        1 => (p[0] + 1, 0, 0),
        2 => (p[0], p[1] + 1, 0),
        _ => (p[0], p[1], p[2] + 1),
    })
}

/// The half-open interval `[low, high)` of one comparator.
fn bounds(comparator: &str) -> Option<(Option<Semver>, Option<Semver>)> {
    let ops = [">=", "<=", ">", "<", "=", "^", "~"];
    let (op, rest) = ops
        .iter()
        .find_map(|op| comparator.strip_prefix(op).map(|rest| (*op, rest)))
        .unwrap_or(("", comparator));
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    let p = if matches!(rest, "*" | "x" | "X") {
        Vec::new()
    } else {
        partial(rest)?
    };
    let low = (!p.is_empty()).then(|| floor(&p));
    Some(match op {
        "" | "=" => (low, after(&p)),
        ">=" => (low, None),
        ">" => (after(&p).or(Some((u64::MAX, 0, 0))), None),
        "<" => (None, Some(floor(&p))),
        "<=" => (None, after(&p)),
        "~" => (low, after(&p[..p.len().min(2)])),
        "^" => {
            // The first non-zero number written may not change.
            let keep = p.iter().position(|&n| n != 0).map_or(p.len(), |i| i + 1);
            (low, after(&p[..keep.min(p.len())]))
        }
        _ => unreachable!("every operator is listed"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let cases = [
            ("1.2.3", "1.2.3", true),
            ("1.2.4", "1.2.3", false),
            ("1.9.0", "^1.2", true),
            ("2.0.0", "^1.2", false),
            ("1.1.9", "^1.2", false),
            ("0.2.9", "^0.2.3", true),
            ("0.3.0", "^0.2.3", false),
            ("0.0.4", "^0.0.3", false),
            ("1.2.9", "~1.2.3", true),
            ("1.3.0", "~1.2.3", false),
            ("1.9.9", "~1", true),
            ("1.5.0", ">=1 <2", true),
            ("2.0.0", ">=1 <2", false),
            ("0.9.0", ">=1 <2", false),
            ("1.7.1", "1.x", true),
            ("2.0.0", "1.x", false),
            ("0.4.0", ">=0.3.0 <0.5.0", true),
            ("1.3.0", ">1.2", true),
            ("1.2.9", ">1.2", false),
            ("1.2.9", "<=1.2", true),
            ("5.0.0", "*", true),
            ("3.0.0", "^1 || ^3", true),
            ("2.0.0", "^1 || ^3", false),
        ];
        for (version, range, expected) in cases {
            let v = parse_version(version).unwrap();
            assert_eq!(satisfies(v, range), Some(expected), "{version} in {range}");
        }
    }

    #[test]
    fn malformed() {
        for range in ["^", "1.2.3.4", "a.b", ">=1 <x.2", "1..2"] {
            assert_eq!(satisfies((1, 0, 0), range), None, "{range}");
        }
        for version in ["1.2", "1.2.3.4", "v1.2.3", "", "1.-2.3"] {
            assert_eq!(parse_version(version), None, "{version}");
        }
    }
}
