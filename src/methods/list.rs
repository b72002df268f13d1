// The one list of tessera's methods, in the order AUTO tries them: the `Algorithm` each
// implements => its folder under src/methods/, its host form, its GPU form. Expanded by the
// `methods!` macro of src/methods/mod.rs (IMPLEMENTED, KERNEL_FILES, prepare_host,
// prepare_gpu) and by build.rs's own `methods!` (the kernel files to build into the library).
methods! {
    CsrVector => csr_vector, CsrVectorHost, CsrVectorGpu;
    Hola => hola, HolaHost, HolaGpu;
    Bccoo => bccoo, BccooHost, BccooGpu;
    Brc => brc, BrcHost, BrcGpu;
    Tile => tile, TileHost, TileGpu;
}
