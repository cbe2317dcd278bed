//! The remaining synthetic fixtures: tokens, text, nesting, data shapes.

use crate::fixtures::Fixture;

pub fn synthetic() -> Vec<Fixture> {
    vec![]
}
