/**
 * Lists the exports of src/ that nothing uses: no file imports them (src/, test/, bench/,
 * scripts/, examples/) and their own file does not use them either, so dead code cannot hide
 * behind `export`. (An export only its own file uses, such as the options type of an exported
 * function, is part of that function's signature and stays.) The package's entry points (package.json `exports` and
 * `bin`) are public API and count as used; deliberate exports beyond them are named in
 * scripts/unused-exports-allow.txt. Parses the sources with the TypeScript compiler already
 * installed (no type checking: fast, and no new dependency). Exit 1 when one is found.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["src", "test", "bench", "scripts", "examples"];
const ALL = "*";

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

function hasExportModifier(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
}

function isDefault(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword);
}

/** The names a module exports itself (re-exports from elsewhere included, `export *` left out). */
function exportedNames(source: ts.SourceFile): string[] {
  const names: string[] = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) names.push(element.name.text);
    } else if (ts.isExportAssignment(statement)) {
      names.push("default");
    } else if (hasExportModifier(statement)) {
      if (isDefault(statement)) names.push("default");
      else if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      } else if ("name" in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) {
        names.push((statement.name as ts.Identifier).text);
      }
    }
  }
  return names;
}

/** How often each identifier occurs in a file (its declaration is one). */
function identifierCounts(source: ts.SourceFile): Map<string, number> {
  const counts = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return counts;
}

/** A relative specifier's target source file, or null for a package import. */
function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  return path.resolve(path.dirname(from), specifier.replace(/\.js$/, ".ts"));
}

/** Every (file, name) some module imports or re-exports; ALL where a whole module is taken. */
function importedNames(files: readonly string[]): Map<string, Set<string>> {
  const used = new Map<string, Set<string>>();
  const mark = (target: string | null, name: string): void => {
    if (target !== null) used.set(target, (used.get(target) ?? new Set()).add(name));
  };
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const target = resolve(file, node.moduleSpecifier.text);
        const clause = node.importClause;
        if (clause?.name) mark(target, "default");
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) mark(target, ALL);
        if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) mark(target, (element.propertyName ?? element.name).text);
        if (!clause) mark(target, ALL);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const target = resolve(file, node.moduleSpecifier.text);
        if (node.exportClause && ts.isNamedExports(node.exportClause)) {
          for (const element of node.exportClause.elements) mark(target, (element.propertyName ?? element.name).text);
        } else mark(target, ALL);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = node.arguments;
        if (argument && ts.isStringLiteralLike(argument)) mark(resolve(file, argument.text), ALL);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        const target = resolve(file, node.argument.literal.text);
        const qualifier = node.qualifier;
        mark(target, qualifier ? (ts.isIdentifier(qualifier) ? qualifier.text : qualifier.left.getText(source)) : ALL);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return used;
}

/** package.json's `exports` and `bin` targets, as source files: public API, used by definition. */
function entryPoints(): Set<string> {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { exports?: Record<string, unknown>; bin?: Record<string, string> };
  const targets: string[] = [...Object.values(pkg.bin ?? {})];
  for (const value of Object.values(pkg.exports ?? {})) {
    if (value !== null && typeof value === "object" && typeof (value as { default?: unknown }).default === "string") targets.push((value as { default: string }).default);
  }
  return new Set(targets.filter((target) => target.startsWith("./dist/src/") || target.startsWith("dist/src/")).map((target) => path.join(root, target.replace(/^\.?\/?dist\//, "").replace(/\.js$/, ".ts"))));
}

/** `src/file.ts:name` lines of the allow-list (after `#` a comment: why the export stays). */
function allowList(): Set<string> {
  const file = path.join(root, "scripts", "unused-exports-allow.txt");
  if (!existsSync(file)) return new Set();
  return new Set(readFileSync(file, "utf8").split("\n").map((line) => line.replace(/#.*/, "").trim()).filter((line) => line.length > 0));
}

function main(): void {
  const files = SCANNED.flatMap((dir) => tsFiles(path.join(root, dir)));
  const used = importedNames(files);
  const entries = entryPoints();
  const allowed = allowList();
  const unused: string[] = [];
  for (const file of files.filter((candidate) => candidate.startsWith(path.join(root, "src") + path.sep))) {
    if (entries.has(file)) continue;
    const taken = used.get(file);
    if (taken?.has(ALL)) continue;
    const relative = path.relative(root, file).split(path.sep).join("/");
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const mentions = identifierCounts(source);
    for (const name of exportedNames(source)) {
      const usedHere = name !== "default" && (mentions.get(name) ?? 0) > 1;
      if (!taken?.has(name) && !usedHere && !allowed.has(`${relative}:${name}`)) unused.push(`${relative}:${name}`);
    }
  }
  if (unused.length > 0) {
    process.stderr.write(`Exports no file imports (remove them, drop the export, or name them in scripts/unused-exports-allow.txt):\n${unused.map((entry) => `  ${entry}\n`).join("")}`);
    process.exitCode = 1;
  }
}

main();
