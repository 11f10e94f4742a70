/**
 * What a view needs to know of the pane it is drawn in (./Workspace.tsx): the element that scrolls it (null where
 * the window scrolls the page), and the master pane's height (null where lists keep their own fixed heights).
 */

import { createContext, useContext } from "react";

export const DetailScroll = createContext<HTMLElement | null>(null);
export const useDetailScroll = () => useContext(DetailScroll);

export const MasterHeight = createContext<number | null>(null);
export const useMasterHeight = () => useContext(MasterHeight);
