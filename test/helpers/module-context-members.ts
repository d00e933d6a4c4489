import path from 'node:path';
import ts from 'typescript';

const TYPES_FILE = path.resolve('src/modules/module-context-types.ts');

export interface ContextMember {
  /** `users.find`, `cache.shared`, `signIn`. */
  name: string;
  /** Whether it can be called. */
  callable: boolean;
  /** The declared type, as the compiler prints it (return types included). */
  type: string;
}

/**
 * Every member of the ModuleContext type, nested members by path: an object member declared in
 * module-context-types.ts (an interface there or an inline type) is listed member by member; a
 * function or any other type (Logger, a string) is one member.
 */
export function moduleContextMembers(): ContextMember[] {
  const program = ts.createProgram([TYPES_FILE], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(TYPES_FILE);
  if (!file) throw new Error(`cannot read ${TYPES_FILE}`);
  const decl = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'ModuleContext');
  if (!decl) throw new Error('ModuleContext is not declared in module-context-types.ts');
  const out: ContextMember[] = [];
  const visit = (type: ts.Type, prefix: string) => {
    for (const prop of checker.getPropertiesOfType(type)) {
      const propType = checker.getTypeOfSymbolAtLocation(prop, decl);
      const name = prefix + prop.getName();
      const callable = propType.getCallSignatures().length > 0;
      const local = (propType.getSymbol()?.getDeclarations() ?? []).some((d) => d.getSourceFile().fileName === file.fileName);
      if (!callable && local) visit(propType, `${name}.`);
      else out.push({ name, callable, type: checker.typeToString(propType, undefined, ts.TypeFormatFlags.NoTruncation) });
    }
  };
  visit(checker.getTypeAtLocation(decl), '');
  return out;
}
