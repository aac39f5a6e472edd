// Browser assets are imported as text (Bun's `with { type: "text" }`), so they are embedded in the binary.
declare module "*.browser.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
