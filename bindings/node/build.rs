//! Links the addon as Node.js loads it.

fn main() {
    napi_build::setup();
}
