/** The sessionStorage key holding the pasted API key (read by the first script too, so it stands alone). */
export const API_KEY_STORAGE = 'flowline.apiKey';
