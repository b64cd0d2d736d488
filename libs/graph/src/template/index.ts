export { TEMPLATE_ROOTS, hasTemplateSyntax } from './engine';
export type { TemplateRoot } from './engine';
export { DEFAULT_TEMPLATE_LIMITS, renderString, renderConfigMember, renderTemplateValue, templateLimitsOf, templatePlace, templateScope, valuePathText } from './render';
export type { RenderOutcome, TemplateLimits, TemplateScope, ValuePath } from './render';
export { checkTemplateText, checkTemplateValue, declaredStateKeys } from './check';
export type { TemplateCheckContext } from './check';
